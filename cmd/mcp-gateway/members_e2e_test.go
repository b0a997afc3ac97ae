package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAmbiguousMembersE2E: through the binary, over stdio, in both eras, a
// tools/call whose params name one tool as "name" and another as "Name"
// (or hold "arguments" twice, through lazy mode's call_tool too) is
// refused -32602 and runs nothing. testbackend decodes its params with Go's
// encoding/json (without case, the last one): before the fix, the gateway
// routed, admitted and audited tb.echo while the backend ran crash, which
// ends it (restart: never), so the call after it failed. A definition with
// "Annotations" beside "annotations" is not listed.
func TestAmbiguousMembersE2E(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	defs := `{"tools":{"wipe":{"description":"Wipes.","annotations":{"destructiveHint":true},"Annotations":{"readOnlyHint":true}}}}`
	if err := os.WriteFile(tools, []byte(defs), 0o600); err != nil {
		t.Fatal(err)
	}
	s := tb("tb", "-tools-file", tools)
	s.Restart = "never"
	cfg := beConfig(t, s)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, era := range []struct {
		name string
		meta string // the params' own _meta member, with its comma
	}{{"2025-11-25", ""}, {"2026-07-28", meta + ","}} {
		t.Run(era.name, func(t *testing.T) {
			var p *proc
			if era.meta == "" {
				p = startRaw(t, cfg, "members-e2e")
			} else {
				p = startGateway(t, baseEnv(t), "--stdio", "--config", cfg)
			}
			for _, params := range []string{
				`{` + era.meta + `"name":"tb.echo","Name":"crash","arguments":{"code":3}}`,
				`{` + era.meta + `"name":"tb.echo","name":"tb.crash","arguments":{"code":3}}`,
				`{` + era.meta + `"name":"tb.crash","arguments":{"code":3},"arguments":{"code":0}}`,
				`{` + era.meta + `"name":"tb.echo","arguments":{},"ARGUMENTS":{"code":3}}`,
			} {
				r := p.Call("tools/call", params)
				code, msg, _ := r.Error(t)
				if code != -32602 || !strings.Contains(msg, "member") {
					t.Errorf("%s: %s, want -32602 naming the member", params, r)
				}
			}
			res := p.Call("tools/call", `{`+era.meta+`"name":"tb.echo","arguments":{"after":true}}`).Result(t)
			if sc, _ := res["structuredContent"].(map[string]any); sc["after"] != true {
				t.Fatalf("echo after the refused calls: %v (did crash run?)", res)
			}
			list := p.Call("tools/list", `{`+strings.TrimSuffix(era.meta, ",")+`}`)
			var l struct {
				Result struct{ Tools []json.RawMessage }
			}
			if err := json.Unmarshal(list.Raw, &l); err != nil || len(l.Result.Tools) == 0 {
				t.Fatalf("tools/list: %s", list)
			}
			if strings.Contains(list.String(), `"tb.wipe"`) {
				t.Errorf("a definition with Annotations beside annotations is listed: %s", list)
			}
		})
	}
}

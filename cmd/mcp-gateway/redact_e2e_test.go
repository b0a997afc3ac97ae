package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
)

// Planted secrets (none is real): what must never reach a log or the
// audit log, nor a client under gateway.redact: results.
var plantedSecrets = []string{
	"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
	"AKIAIOSFODNN7EXAMPLE",
	"ghp_1234567890abcdefghijABCDEFGHIJ123456",
	"abc123def456ghi789jkl",
	"eyJzdWIiOiIxMjM0NTY3ODkwIn0",
}

// leakTools is a tools file whose leak tool answers with every planted
// secret, in its text and its structuredContent.
func leakTools(t *testing.T, file string) {
	t.Helper()
	text := "key: -----BEGIN RSA PRIVATE KEY-----\n" + plantedSecrets[0] + "\n-----END RSA PRIVATE KEY-----\n" +
		"aws " + plantedSecrets[1] + " github " + plantedSecrets[2] + "\nAuthorization: Bearer " + plantedSecrets[3] +
		"\njwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + plantedSecrets[4] + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	data, _ := json.Marshal(map[string]any{"tools": map[string]any{"leak": map[string]any{
		"description": "Returns a configuration file.",
		"result":      map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "structuredContent": map[string]any{"token": plantedSecrets[2]}},
	}}})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range plantedSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %s", where, s)
		}
	}
}

// TestRedactResults is issue 25's acceptance for redaction: secrets planted
// in a backend's result (and its stderr, and a call's arguments) are masked
// in what the client gets under gateway.redact: results, and never appear
// in the gateway's log (debug on) or its audit log (arguments on), with or
// without redact; the audit log counts the masked secrets.
func TestRedactResults(t *testing.T) {
	t.Parallel()
	for _, redact := range []string{"results", "off"} {
		t.Run(redact, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tools, pins, auditLog := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.pins.json"), filepath.Join(dir, "audit.jsonl")
			leakTools(t, tools)
			cfg := map[string]any{"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false,
				"pins": pins, "redact": redact, "audit": map[string]any{"path": auditLog, "arguments": true}},
				"servers": []beServer{tb("calc", "-tools-file", tools, "-stderr-text", "starting with token "+plantedSecrets[2]+` {"msg":"up\n`+plantedSecrets[2]+`"}`)}}
			b, _ := json.Marshal(cfg)
			path := filepath.Join(dir, "config.yaml")
			os.WriteFile(path, b, 0o600)
			s := startRaw(t, path, "redact-test", "DEBUG=1")
			leak := s.callTool("calc.leak", `{}`)
			// After a JSON escape too: the arguments, and the echo's
			// text, which is JSON in a JSON string ("x\\n…").
			echo := s.callTool("calc.echo", `{"password":"Authorization: Bearer `+plantedSecrets[3]+`","note":"x\n`+plantedSecrets[2]+`"}`)
			if redact == "results" {
				noSecret(t, "the leak result", leak.String())
				noSecret(t, "the echo result", echo.String())
				for _, kind := range []string{"private-key", "aws-access-key", "github-token", "authorization", "jwt"} {
					if !strings.Contains(leak.String(), "[redacted:"+kind+"]") {
						t.Errorf("the result lacks [redacted:%s]: %s", kind, leak)
					}
				}
				leak.Result(t) // still a result, still JSON
			} else if !strings.Contains(leak.String(), plantedSecrets[2]) {
				t.Fatalf("without redact the result is changed: %s", leak)
			}
			s.Stop(testutil.DefaultTimeout)
			noSecret(t, "the gateway's log", s.Stderr.String())
			if !strings.Contains(s.Stderr.String(), "starting with token [redacted:github-token]") {
				t.Errorf("the backend's stderr line is not in the log, masked:\n%s", s.Stderr)
			}
			data, err := os.ReadFile(auditLog)
			if err != nil {
				t.Fatal(err)
			}
			noSecret(t, "the audit log", string(data))
			entries, _ := audit.Tail(auditLog, 10)
			var leakEntry, echoEntry *audit.Entry
			for i, e := range entries {
				switch e.Tool {
				case "calc.leak":
					leakEntry = &entries[i]
				case "calc.echo":
					echoEntry = &entries[i]
				}
			}
			if leakEntry == nil || echoEntry == nil {
				t.Fatalf("audit entries: %s", data)
			}
			if wantN := map[string]int{"results": 6, "off": 0}[redact]; leakEntry.Redactions != wantN || leakEntry.Outcome != "ok" || leakEntry.Server != "calc" || leakEntry.Client != "redact-test" {
				t.Errorf("the leak call's entry (want %d redactions): %+v", wantN, leakEntry)
			}
			if !strings.Contains(string(echoEntry.Args), "[redacted:authorization]") || !strings.HasPrefix(echoEntry.ArgsDigest, "sha256:") {
				t.Errorf("the echo call's arguments: %s", echoEntry.Args)
			}
		})
	}
}

// TestConfirmDestructive: under gateway.confirm: destructive a call of a
// tool annotated destructiveHint: true is put to the user through the
// client's elicitation and runs only when accepted; a client that cannot
// ask, and REST, are refused; mcp-gateway call runs it (the user typed
// it); a tool that is not destructive is never asked about.
func TestConfirmDestructive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools, pins := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.pins.json")
	data, _ := json.Marshal(map[string]any{"tools": map[string]any{"wipe": map[string]any{
		"description": "Deletes everything.", "annotations": map[string]any{"destructiveHint": true},
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "wiped"}}},
	}}})
	os.WriteFile(tools, data, 0o600)
	cfg := trustConfig(t, "config.yaml", tools, pins, map[string]any{"confirm": "destructive"})

	var asked atomic.Int32
	var answer atomic.Value
	answer.Store("accept")
	var message atomic.Value
	cs := startSDK(t, cfg, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		message.Store(r.Params.Message)
		return &mcp.ElicitResult{Action: answer.Load().(string), Content: map[string]any{"confirm": true}}, nil
	}})
	res, err := cs.CallTool(beCtx(t), &mcp.CallToolParams{Name: "calc.wipe", Arguments: map[string]any{"path": "/"}})
	if err != nil || res.IsError || asked.Load() != 1 {
		t.Fatalf("accepted call: %v %+v, asked %d times", err, res, asked.Load())
	}
	if m := message.Load().(string); !strings.Contains(m, "calc.wipe") || !strings.Contains(m, "destructive") || !strings.Contains(m, `"path":"/"`) {
		t.Errorf("the question: %q", m)
	}
	answer.Store("decline")
	if _, err := cs.CallTool(beCtx(t), &mcp.CallToolParams{Name: "calc.wipe", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "declined") {
		t.Fatalf("declined call: %v", err)
	}
	if _, err := cs.CallTool(beCtx(t), &mcp.CallToolParams{Name: "calc.echo", Arguments: map[string]any{}}); err != nil || asked.Load() != 2 {
		t.Fatalf("a tool that is not destructive: %v, asked %d times", err, asked.Load())
	}

	// A client of 2026-07-28 is asked by an input_required answer to its
	// call, and its retry with the answer runs the call.
	cs26 := startSDKVersion(t, cfg, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}}, "2026-07-28")
	if v := cs26.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s", v)
	}
	res, err = cs26.CallTool(beCtx(t), &mcp.CallToolParams{Name: "calc.wipe", Arguments: map[string]any{}})
	if err != nil || res.IsError || asked.Load() != 3 || !strings.Contains(fmt.Sprint(res.Content[0]), "wiped") {
		t.Fatalf("a 2026-07-28 client's accepted call: %v %+v, asked %d times", err, res, asked.Load())
	}

	// A client without elicitation cannot be asked: refused.
	raw := startRaw(t, cfg, "no-elicitation")
	code, msg, data2 := raw.callTool("calc.wipe", `{}`).Error(t)
	if code != -32003 || data2["reason"] != "unconfirmed" || !strings.Contains(msg, "cannot ask") {
		t.Fatalf("without elicitation: %d %s %v", code, msg, data2)
	}
	// REST cannot ask either.
	web := startHTTP(t, cfg)
	if code, r := restCall(t, web.base, `{"server":"calc","toolName":"wipe","input":{}}`); code != 403 || r.Error.Code != "CALL_REFUSED" {
		t.Fatalf("REST: %d %+v", code, r)
	}
	// The user at the terminal asked for it.
	out, err := gwCommand(t, "call", "calc.wipe", "{}", "--config", cfg).Output()
	if err != nil || !strings.Contains(string(out), "wiped") {
		t.Fatalf("mcp-gateway call: %v\n%s", err, out)
	}
}

package main

// Code mode (docs/code-mode.md) through the binary and go-sdk's client, of
// both eras: a script that calls two servers and a destructive tool,
// confirmed through the client's elicitation mid-script, and the audit log
// that records each call with the run's id.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRunScriptThroughBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":{"wipe":{"annotations":{"destructiveHint":true}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
			cfg := gatewayConfig(t, map[string]any{"tools_mode": "lazy", "confirm": "destructive", "trust": "off",
				"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "audit": map[string]any{"path": auditLog}},
				tb("a"), tb("b"), tb("d", "-tools-file", tools))
			var mu sync.Mutex
			var asked []string
			cs := startSDKVersion(t, cfg, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				},
			}, version)
			if names := sdkToolNames(t, cs); !slices.Contains(names, "gateway.run_script") {
				t.Fatalf("tools/list: %v", names)
			}
			res, err := cs.CallTool(beCtx(t), &mcp.CallToolParams{Name: "gateway.run_script", Arguments: map[string]any{"script": `
				const [x, y] = await Promise.all([tools["a.echo"]({n: 20}), tools["b.echo"]({n: 22})]);
				const w = await tools["d.wipe"]({what: "old"});
				return {sum: x.n + y.n, wiped: w.what};`}})
			if err != nil || res.IsError {
				t.Fatalf("run_script: %v %v", res, err)
			}
			got, _ := json.Marshal(res.StructuredContent)
			if string(got) != `{"calls":3,"logs":[],"result":{"sum":42,"wiped":"old"}}` {
				t.Errorf("structuredContent = %s", got)
			}
			mu.Lock()
			if len(asked) != 1 {
				t.Errorf("confirmations asked: %q, want the wipe's", asked)
			}
			mu.Unlock()

			// The audit log: each call with the run's id, via run_script,
			// then the run.
			lines := auditLines(t, auditLog)
			if len(lines) != 4 {
				t.Fatalf("%d audit lines, want 4: %v", len(lines), lines)
			}
			run := lines[3]
			id, _ := run["run_id"].(string)
			if run["tool"] != "gateway.run_script" || id == "" {
				t.Fatalf("the run's line: %v", run)
			}
			var called []string
			for _, e := range lines[:3] {
				if e["run_id"] != id || e["via"] != "gateway.run_script" || e["outcome"] != "ok" {
					t.Errorf("a script's call's line: %v, want run_id %s", e, id)
				}
				called = append(called, e["tool"].(string))
			}
			slices.Sort(called)
			if !slices.Equal(called, []string{"a.echo", "b.echo", "d.wipe"}) {
				t.Errorf("calls audited: %v", called)
			}
		})
	}
}

// In full mode run_script is off unless gateway.code_mode is true.
func TestRunScriptFullModeOptIn(t *testing.T) {
	t.Parallel()
	off := startRaw(t, gatewayConfig(t, map[string]any{"tools_mode": "full"}, tb("a")), "e2e")
	wantNoTools(t, off.toolsList(), "gateway.run_script")
	if code, _, _ := off.callTool("gateway.run_script", `{"script":"return 1"}`).Error(t); code != -32602 {
		t.Errorf("run_script in full mode: %d, want not found", code)
	}
	on := startRaw(t, gatewayConfig(t, map[string]any{"tools_mode": "full", "code_mode": true}, tb("a")), "e2e")
	wantTools(t, on.toolsList(), "gateway.run_script", "a.echo")
	if sc := on.structured("gateway.run_script", `{"script":"return (await tools[\"a.echo\"]({v: 7})).v"}`); sc["result"] != json.Number("7") {
		t.Errorf("run_script with code_mode: true: %v", sc)
	}
}

// gateway.code_mode_limits.runs through the binary: a client that already
// has its runs under way is refused one more, with the limit named, and is
// admitted again once one is cancelled.
func TestRunScriptRunsLimitThroughBinary(t *testing.T) {
	t.Parallel()
	s := startRaw(t, gatewayConfig(t, map[string]any{"tools_mode": "lazy", "code_mode_limits": map[string]any{"runs": 1}}, tb("a")), "e2e")
	id := s.Request("tools/call", `{"name":"gateway.run_script","arguments":{"script":"await tools[\"a.hang\"]({}); return 1"}}`)
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return s.structured("a.stats", `{}`)["active"] == json.Number("1") }) {
		t.Fatal("the run's call never reached the backend")
	}
	r := s.callTool("gateway.run_script", `{"script":"return 2"}`).Map()["result"].(map[string]any)
	if text, _ := json.Marshal(r["content"]); r["isError"] != true || !strings.Contains(string(text), "run_script refused: 1 of your runs are already under way, your limit (gateway.code_mode_limits.runs)") {
		t.Errorf("a second run: %v", r)
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		r, _ := s.callTool("gateway.run_script", `{"script":"return 3"}`).Map()["result"].(map[string]any)
		return r != nil && r["isError"] != true
	}) {
		t.Error("not admitted again after the run was cancelled")
	}
}

// auditLines reads the audit log at path, one JSON object a line.
func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		lines = append(lines, e)
	}
	return lines
}

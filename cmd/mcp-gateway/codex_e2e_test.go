package main

// Codex (npm @openai/codex, pinned in package-lock.json) runs `codex exec`
// with approval_policy = "never" against the fake Responses API on
// loopback, which scripts the model's calls, and the real gateway binary in
// lazy mode as its MCP server, in front of the npm servers everything and
// memory. Without Codex installed (scripts/npm-peers) the test fails, or is
// skipped under -short.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// With approval_policy = "never" Codex runs a tool only when its
// annotations say it needs no approval. The meta tools say so for finding,
// describing and read-only calls, so find → describe → call completes; a
// backend tool that changes things stays behind an approval through
// call_tool, which Codex refuses without calling the gateway.
func TestCodexLazyFindDescribeCall(t *testing.T) {
	t.Parallel()
	root := npmPeers(t, "@openai/codex/bin/codex.js")
	codex := filepath.Join(root, "node_modules", ".bin", "codex")
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	mem := nodeServer(root, "memory", "server-memory")
	mem.Env = map[string]string{"MEMORY_FILE_PATH": memFile}
	b, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false, "tools_mode": "lazy"},
		"servers": []beServer{nodeServer(root, "everything", "server-everything", "stdio"), mem},
	})
	if err != nil {
		t.Fatal(err)
	}
	gwConfig := testutil.TempFile(t, "gateway.yaml", string(b))

	// The model's turns: find, describe, a read-only call, a call that
	// changes things, and the answer. Codex names MCP tools
	// <server>__<tool> in the namespace mcp__<server>; the gateway gives
	// Codex (a strict client) names with __.
	const ns = "mcp__gateway"
	call := func(id, tool string, args any) answertest.Reply {
		a, _ := json.Marshal(args)
		return answertest.Stream(e2eModel, answertest.FunctionCall(id, ns, "gateway__"+tool, string(a)))
	}
	srv := newFake(t,
		call("call_find", "find_tools", map[string]any{"query": "echo a message back to me"}),
		call("call_describe", "describe_tool", map[string]any{"name": "everything__echo"}),
		call("call_read", "call_tool_read", map[string]any{"name": "everything__echo", "arguments": map[string]any{"message": "through the gateway"}}),
		call("call_write", "call_tool", map[string]any{"name": "memory__create_entities", "arguments": map[string]any{
			"entities": []any{map[string]any{"name": "codex", "entityType": "client", "observations": []string{"was here"}}},
		}}),
		answertest.Stream(e2eModel, answertest.Message("All done.")),
	)

	stdout := codexExec(t, codex, srv.URL, gwConfig, "", "Echo a message through the gateway, then remember that Codex was here.")
	if !strings.Contains(stdout, "All done.") {
		t.Errorf("codex's answer: %q", stdout)
	}

	// What Codex sent the model after each call: the tool's text.
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests to the model, want 5", len(reqs))
	}
	output := func(i int, callID string) string {
		t.Helper()
		var body struct {
			Input []struct {
				Type   string          `json:"type"`
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if err := json.Unmarshal(reqs[i].Raw, &body); err != nil {
			t.Fatal(err)
		}
		for _, in := range body.Input {
			if in.Type == "function_call_output" && in.CallID == callID {
				return string(in.Output)
			}
		}
		t.Fatalf("request %d has no output of %s: %s", i, callID, reqs[i].Raw)
		return ""
	}
	// The meta tools are listed to the model with their annotations'
	// effect: all four, none deferred.
	for _, name := range []string{"gateway__find_tools", "gateway__describe_tool", "gateway__call_tool", "gateway__call_tool_read"} {
		if !strings.Contains(string(reqs[0].Raw), `"name":"`+name+`"`) {
			t.Errorf("the model is not offered %s", name)
		}
	}
	if out := output(1, "call_find"); !strings.Contains(out, `\"name\":\"everything__echo\"`) || !strings.Contains(out, `\"readOnly\":true`) {
		t.Errorf("find_tools output: %s", out)
	}
	if out := output(2, "call_describe"); !strings.Contains(out, `\"name\":\"everything__echo\"`) || !strings.Contains(out, `inputSchema`) {
		t.Errorf("describe_tool output: %s", out)
	}
	if out := output(3, "call_read"); !strings.Contains(out, "Echo: through the gateway") {
		t.Errorf("call_tool_read output: %s", out)
	}
	if out := output(4, "call_write"); !strings.Contains(out, "requires approval") {
		t.Errorf("call_tool output: %s, want Codex's refusal", out)
	}
	// Codex refused before calling: memory never wrote its file.
	if _, err := os.Stat(memFile); !os.IsNotExist(err) {
		t.Errorf("memory file after the refused call: %v", err)
	}
}

// codexExec runs `codex exec prompt` once, in a home of its own, with the
// fake Responses API at modelURL as its model and the gateway (its
// configuration at cfg) as its MCP server "gateway", never asking for
// approval; extraTOML is added to its config.toml. It returns what Codex
// printed.
func codexExec(t *testing.T, codex, modelURL, cfg, extraTOML, prompt string) string {
	t.Helper()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf(`model = "gpt-5.1-codex"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"

[mcp_servers.gateway]
command = %q
args = ["--stdio", "--config", %q]
startup_timeout_sec = 60
tool_timeout_sec = 60
%s`, modelURL, gatewayBin, cfg, extraTOML)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "--cd", home, prompt)
	cmd.Env = baseEnv(t, "HOME="+home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr testutil.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("codex stdout:\n%s\ncodex stderr:\n%s", stdout.String(), stderr.String())
		}
	})
	return stdout.String()
}

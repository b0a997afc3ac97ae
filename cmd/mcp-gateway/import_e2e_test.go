package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A Claude Desktop file with two testbackend servers and the gateway's own
// entry, imported with --from PATH --write: `tools` on the written YAML
// lists every imported server's tools; --replace-client then leaves the
// client one entry that serves the same tools.
func TestImportClaudeDesktopEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := filepath.Join(dir, "claude_desktop_config.json")
	writeJSONFile(t, dir, "claude_desktop_config.json", map[string]any{
		"globalShortcut": "Alt+Space",
		"mcpServers": map[string]any{
			"gateway":   map[string]any{"command": gatewayBin, "args": []string{"--stdio", "--config", client}},
			"tb.one":    map[string]any{"command": backendBin, "args": []string{"-name", "one"}},
			"tb-two":    map[string]any{"command": backendBin, "args": []string{"-extra-tools", "2"}, "env": map[string]string{"TESTBACKEND_NAME": "two"}},
			"sleeping":  map[string]any{"command": backendBin, "disabled": true},
			"dangerous": map[string]any{"command": backendBin, "args": []string{"literal ${NOT_EXPANDED}"}},
		},
	})
	env := baseEnv(t)
	out := filepath.Join(dir, "gateway.yaml")

	// Printed to stdout.
	yaml, errOut, code := runCLIEnv(t, env, "import", "--from", client)
	if code != 0 || !strings.Contains(yaml, "name: tb_one") || strings.Contains(yaml, "--stdio") {
		t.Fatalf("import: exit %d\n%s\n%s", code, yaml, errOut)
	}
	if !strings.Contains(errOut, "not imported") || !strings.Contains(errOut, "mcpServers.gateway") {
		t.Errorf("no notice of the skipped gateway entry:\n%s", errOut)
	}

	// Written, then refused without --force.
	if _, errOut, code := runCLIEnv(t, env, "import", "--from", client, "--write", out); code != 0 {
		t.Fatalf("import --write: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLIEnv(t, env, "import", "--from", client, "--write", out); code != 2 || !strings.Contains(errOut, "--force") {
		t.Errorf("second --write: exit %d, want 2 with a hint at --force\n%s", code, errOut)
	}
	if _, errOut, code := runCLIEnv(t, env, "import", "--from", client, "--write", out, "--force"); code != 0 {
		t.Errorf("--force: exit %d\n%s", code, errOut)
	}

	tools, errOut, code := runCLIEnv(t, env, "tools", "--config", out, "--json")
	if code != 0 {
		t.Fatalf("tools: exit %d\n%s", code, errOut)
	}
	var got struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Servers []struct{ Name, State string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(tools), &got); err != nil {
		t.Fatalf("%v\n%s", err, tools)
	}
	names := map[string]bool{}
	for _, tl := range got.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"tb_one.echo", "tb-two.echo", "tb-two.extra_001", "dangerous.echo"} {
		if !names[want] {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}
	states := map[string]string{}
	for _, s := range got.Servers {
		states[s.Name] = s.State
	}
	if len(states) != 4 || states["sleeping"] != "disabled" || states["tb_one"] != "ready" || states["tb-two"] != "ready" || states["dangerous"] != "ready" {
		t.Errorf("servers = %v", states)
	}

	// --replace-client: a backup, one entry, the other keys kept.
	_, errOut, code = runCLIEnv(t, env, "import", "--from", client, "--write", out, "--force", "--replace-client")
	if code != 0 || !strings.Contains(errOut, "backed up to "+client+".bak-") {
		t.Fatalf("--replace-client: exit %d\n%s", code, errOut)
	}
	var after struct {
		GlobalShortcut string
		MCPServers     map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(client)
	if err := json.Unmarshal(b, &after); err != nil {
		t.Fatal(err)
	}
	g, ok := after.MCPServers["gateway"]
	if len(after.MCPServers) != 1 || !ok || after.GlobalShortcut != "Alt+Space" || strings.Join(g.Args, " ") != "--stdio --config "+out {
		t.Errorf("client file after --replace-client:\n%s", b)
	}
	// What the client now sees: the gateway entry serving every tool.
	tools, errOut, code = runCLIEnv(t, env, "tools", "--config", client)
	if code != 0 || !strings.Contains(tools, "gateway.tb_one.echo") {
		t.Errorf("tools through the client's new entry: exit %d\n%s\n%s", code, tools, errOut)
	}
}

func TestImportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n\"mcpServers\": {,}\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "import needs --from"},
		{[]string{"import", "--from", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"import", "--from", bad}, bad + ":2: invalid JSON"},
		{[]string{"import", "--from", "claude-desktop"}, "no Claude Desktop configuration found"},
		{[]string{"import", "--from", bad, "--replace-client"}, "--replace-client needs --write"},
		{[]string{"tools", "--from", bad}, "belong to import"},
		{[]string{"tools", "--no-sandbox"}, "belong to import"},
	} {
		_, errOut, code := runCLIEnv(t, baseEnv(t), c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", c.args, code, c.want, errOut)
		}
	}
}

// `--from claude-desktop` finds the file where Claude Desktop keeps it on
// this OS.
func TestImportNamedClient(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var where string
	switch runtime.GOOS {
	case "darwin":
		where = filepath.Join(home, "Library", "Application Support", "Claude")
	case "windows":
		where = filepath.Join(home, "AppData", "Roaming", "Claude")
	default:
		where = filepath.Join(home, ".config", "Claude")
	}
	writeJSONFile(t, where, "claude_desktop_config.json", map[string]any{
		"mcpServers": map[string]any{"tb": map[string]any{"command": backendBin}},
	})
	env := append(baseEnv(t), "HOME="+home, "USERPROFILE="+home, "APPDATA="+filepath.Join(home, "AppData", "Roaming"))
	out, errOut, code := runCLIEnv(t, env, "import", "--from", "claude-desktop")
	if code != 0 || !strings.Contains(out, "name: tb") || !strings.Contains(out, "claude_desktop_config.json: mcpServers.tb") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// A "~" in --from and --write (quoted, so no shell expanded it, as a
// Windows shell never does) is the home directory, as in --config; the
// file does not land in a directory named "~".
func TestImportPathsExpandHome(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	writeJSONFile(t, home, "claude_desktop_config.json", map[string]any{
		"mcpServers": map[string]any{"tb": map[string]any{"command": backendBin}},
	})
	writes := []string{"~/sub/gateway.yaml"}
	if runtime.GOOS == "windows" {
		writes = append(writes, `~\sub\windows.yaml`)
	}
	for _, w := range writes {
		work := t.TempDir()
		cmd := exec.Command(gatewayBin, "import", "--from", "~/claude_desktop_config.json", "--write", w)
		cmd.Env, cmd.Dir = env, work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("import --write %s: %v\n%s", w, err, out)
			continue
		}
		want := filepath.Join(home, "sub", filepath.Base(filepath.FromSlash(strings.ReplaceAll(w, `\`, "/"))))
		if _, err := os.Stat(want); err != nil {
			t.Errorf("--write %s: %v\n%s", w, err, out)
		}
		if _, err := os.Stat(filepath.Join(work, "~")); err == nil {
			t.Errorf("--write %s made a directory named ~ in the working directory", w)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("--write %s: the message does not name %s:\n%s", w, want, out)
		}
	}
}

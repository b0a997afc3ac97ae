package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Relative paths written in the file are relative to the file's directory,
// wherever the gateway runs; a command with a separator to cwd when it has
// one; args and bare command names are the backend's (PATH, its working
// directory); --debug PATH and DEBUG=PATH are the working directory's.
func TestRelativePathsFromTheFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "conf")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sub, "gateway.yaml")
	text := `server:
  debug_file: logs/gw.log
policy:
  system:
    source: file
    path: policy.md
servers:
  - name: a
    command: ./bin/server
    args: [./data, node_modules/x.js]
  - name: b
    command: ../tools/run
    cwd: work
  - name: c
    command: npx
    args: [-y, pkg]
    cwd: ` + filepath.Join(dir, "abs") + `
  - name: d
    command: ~/bin/d
    cwd: ../..
`
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "policy.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Loaded by a relative --config from another working directory.
	t.Chdir(dir)
	home := filepath.FromSlash("/home/me")
	c, _, err := Load(LoadOptions{Path: filepath.Join("conf", "gateway.yaml"), Home: home, Env: mapEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, got, want string }{
		{"a.command", c.Servers[0].Command, filepath.Join(sub, "bin", "server")},
		{"a.args[0]", c.Servers[0].Args[0], "./data"},
		{"a.cwd", c.Servers[0].Cwd, ""},
		{"b.cwd", c.Servers[1].Cwd, filepath.Join(sub, "work")},
		{"b.command", c.Servers[1].Command, filepath.Join(sub, "tools", "run")},
		{"c.command", c.Servers[2].Command, "npx"},
		{"c.cwd", c.Servers[2].Cwd, filepath.Join(dir, "abs")},
		{"d.command", c.Servers[3].Command, filepath.Join(home, "bin", "d")},
		{"d.cwd", c.Servers[3].Cwd, filepath.Dir(dir)},
		{"server.debug_file", c.Server.DebugFile, filepath.Join(sub, "logs", "gw.log")},
		{"policy.system.path", c.Policy.System.Path, filepath.Join(sub, "policy.md")},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	// From the command line or the environment: as given.
	for _, opts := range []LoadOptions{
		{Path: p, Env: mapEnv(nil), Flags: Flags{DebugFile: "gw.log"}},
		{Path: p, Env: mapEnv(map[string]string{"DEBUG": "gw.log"})},
	} {
		c, _, err := Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.Server.DebugFile != "gw.log" {
			t.Errorf("debug file %q from the command line or environment, want gw.log", c.Server.DebugFile)
		}
	}
}

package backends

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

func TestSelfMatch(t *testing.T) {
	dir := t.TempDir()
	name := "gw"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	exe := filepath.Join(dir, "bin", name)
	other := filepath.Join(dir, "bin", "other"+filepath.Ext(name))
	for _, p := range []string{exe, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	cfg := filepath.Join(dir, "cfg.yaml")
	upper := filepath.Join(dir, "upper.yaml")
	self := Self{Executable: exe, Config: cfg, Chain: []string{upper}, Home: home, Dir: dir}
	cases := []struct {
		name string
		srv  config.Server
		want Match
	}{
		{"same config", config.Server{Command: exe, Args: []string{"--stdio", "--config", cfg}}, Match{true, cfg, true}},
		{"--config=", config.Server{Command: exe, Args: []string{"--config=" + cfg}}, Match{true, cfg, true}},
		{"-c relative to cwd", config.Server{Command: exe, Args: []string{"-c", "cfg.yaml"}, Cwd: dir}, Match{true, cfg, true}},
		{"relative command", config.Server{Command: filepath.Join("bin", name), Args: []string{"-c", cfg}, Cwd: dir}, Match{true, cfg, true}},
		{"a config above", config.Server{Command: exe, Args: []string{"--config", upper}}, Match{true, upper, true}},
		{"default path", config.Server{Command: exe, Args: []string{"--stdio"}}, Match{true, config.DefaultPath(home), false}},
		{"~/", config.Server{Command: exe, Args: []string{"--config", "~/x.yaml"}}, Match{true, filepath.Join(home, "x.yaml"), false}},
		{"other config", config.Server{Command: exe, Args: []string{"--config", filepath.Join(dir, "b.yaml")}}, Match{true, filepath.Join(dir, "b.yaml"), false}},
		{"other program", config.Server{Command: other, Args: []string{"--config", cfg}}, Match{}},
		{"not found", config.Server{Command: "no-such-program-here", Args: []string{"--config", cfg}}, Match{}},
		{"url", config.Server{URL: "http://x"}, Match{}},
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(exe, link); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			srv  config.Server
			want Match
		}{"symlink", config.Server{Command: link, Args: []string{"--config", cfg}}, Match{true, cfg, true}})
	}
	for _, c := range cases {
		if got := self.Match(c.srv); got != c.want {
			t.Errorf("%s: Match = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestSelfChain(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
	chainJSON, _ := json.Marshal([]string{a, b})
	env := map[string]string{ChainEnv: string(chainJSON)}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := NewSelf(c, dir, lookup)
	if s.Recursive() {
		t.Error("c is not in the chain a, b")
	}
	environ := s.Environ([]string{"A=1", ChainEnv + "=old"})
	var chain []string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, ChainEnv+"="); ok {
			if err := json.Unmarshal([]byte(v), &chain); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{a, b, c}; !slices.Equal(chain, want) || len(environ) != 2 {
		t.Errorf("children's environ %q, chain %q, want %q", environ, chain, want)
	}
	if !NewSelf(b, dir, lookup).Recursive() {
		t.Error("b is in the chain")
	}
	env[ChainEnv] = "not json"
	if NewSelf(a, dir, lookup).Recursive() {
		t.Error("a malformed chain must be ignored")
	}
}

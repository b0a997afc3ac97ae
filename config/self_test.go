package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
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
		srv  Server
		want SelfMatch
	}{
		{"same config", Server{Command: exe, Args: []string{"--stdio", "--config", cfg}}, SelfMatch{true, cfg, true}},
		{"--config=", Server{Command: exe, Args: []string{"--config=" + cfg}}, SelfMatch{true, cfg, true}},
		{"-c relative to cwd", Server{Command: exe, Args: []string{"-c", "cfg.yaml"}, Cwd: dir}, SelfMatch{true, cfg, true}},
		{"relative command", Server{Command: filepath.Join("bin", name), Args: []string{"-c", cfg}, Cwd: dir}, SelfMatch{true, cfg, true}},
		{"a config above", Server{Command: exe, Args: []string{"--config", upper}}, SelfMatch{true, upper, true}},
		{"default path", Server{Command: exe, Args: []string{"--stdio"}}, SelfMatch{true, DefaultPath(home), false}},
		{"~/", Server{Command: exe, Args: []string{"--config", "~/x.yaml"}}, SelfMatch{true, filepath.Join(home, "x.yaml"), false}},
		{"other config", Server{Command: exe, Args: []string{"--config", filepath.Join(dir, "b.yaml")}}, SelfMatch{true, filepath.Join(dir, "b.yaml"), false}},
		{"other program", Server{Command: other, Args: []string{"--config", cfg}}, SelfMatch{}},
		{"not found", Server{Command: "no-such-program-here", Args: []string{"--config", cfg}}, SelfMatch{}},
		{"url", Server{URL: "http://x"}, SelfMatch{}},
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(exe, link); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			srv  Server
			want SelfMatch
		}{"symlink", Server{Command: link, Args: []string{"--config", cfg}}, SelfMatch{true, cfg, true}})
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

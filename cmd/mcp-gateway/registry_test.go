package main

// Tests of search and add against the fixture registry
// (config/registry/registrytest), in-process: the resulting YAML is
// compared with testdata/add/*.yaml (UPDATE_GOLDEN=1 rewrites them), the
// prompts are driven through an injected terminal, the secrets land in a
// test double of the secret store.

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config/registry/registrytest"
)

// fakeTTY answers prompts from a script: the first answer whose key the
// prompt contains. It records each prompt and whether it was hidden.
type fakeTTY struct {
	mu      sync.Mutex
	answers [][2]string
	asked   []string
	// interrupt, when it is in a prompt, makes that prompt end as Ctrl-C
	// does.
	interrupt string
	// onAsk, when set, runs at each prompt first.
	onAsk func(prompt string)
}

func (f *fakeTTY) answer(prompt string, hidden bool) (string, error) {
	if f.onAsk != nil {
		f.onAsk(prompt)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if hidden {
		f.asked = append(f.asked, "hidden: "+prompt)
	} else {
		f.asked = append(f.asked, prompt)
	}
	if f.interrupt != "" && strings.Contains(prompt, f.interrupt) {
		return "", errInterrupted
	}
	for _, a := range f.answers {
		if strings.Contains(prompt, a[0]) {
			return a[1], nil
		}
	}
	return "", fmt.Errorf("fakeTTY: no answer for %q", prompt)
}

func (f *fakeTTY) Line(_ context.Context, p string) (string, error)   { return f.answer(p, false) }
func (f *fakeTTY) Secret(_ context.Context, p string) (string, error) { return f.answer(p, true) }

// memSecrets is the secret store's test double.
type memSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memSecrets) Set(name, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[name] = value
	return nil
}

// addBaseConfig is the configuration add adds to: comments, a server, and
// a key after the servers list, all of which must stay as they are.
const addBaseConfig = `# my gateway (a comment add keeps)
gateway:
  trust: pin   # the default, said again
  registry: {url: REGISTRY}

servers:
  # the first server
  - name: memory
    command: node
    args: [memory.js]   # its script

# web answers
search:
  defaults: {max_results: 5}
`

// addRun is one in-process run of the gateway's command line.
type addRun struct {
	code           int
	stdout, stderr string
}

func runInProc(t *testing.T, home string, tty prompter, secrets secretStore, args ...string) addRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	lookup := func(k string) (string, bool) {
		switch k {
		case "HOME", "USERPROFILE":
			return home, true
		case "PATH":
			return os.LookupEnv("PATH")
		}
		return "", false
	}
	code := run(t.Context(), args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, lookup: lookup, tty: tty, secrets: secrets})
	return addRun{code, stdout.String(), stderr.String()}
}

// fixtureRegistry serves the fixture entries.
func fixtureRegistry(t *testing.T) *registrytest.Registry {
	return registrytest.New(t, filepath.Join("..", "..", registrytest.Dir), 0)
}

// writeStart writes addBaseConfig pointing at url into dir.
func writeStart(t *testing.T, dir, url string) string {
	t.Helper()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(addBaseConfig, "REGISTRY", url, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAddGolden adds each fixture entry and compares the configuration
// with its golden file, and the secret store with what the entry's
// secrets must be.
func TestAddGolden(t *testing.T) {
	reg := fixtureRegistry(t)
	shared := t.TempDir() // a path a filepath input names
	cases := []struct {
		name    string
		args    []string
		tty     *fakeTTY
		secrets map[string]string
		prompts []string // what the terminal was asked, in order (hidden: for secrets)
	}{
		{name: "npm-secret-env", args: []string{"add", "io.github.brave/brave-search-mcp-server", "--env", "BRAVE_API_KEY=BSA-test-key", "--yes"},
			secrets: map[string]string{"brave-search-mcp-server.BRAVE_API_KEY": "BSA-test-key"}},
		{name: "npm-secret-prompted", args: []string{"add", "io.github.brave/brave-search-mcp-server"},
			tty:     &fakeTTY{answers: [][2]string{{"BRAVE_API_KEY", "BSA-typed-key"}, {"Add it?", "y"}}},
			secrets: map[string]string{"brave-search-mcp-server.BRAVE_API_KEY": "BSA-typed-key"},
			prompts: []string{"hidden: environment variable BRAVE_API_KEY (Your Brave Search API key) (hidden): ", "Add it? [y/N] "}},
		{name: "pypi", args: []string{"add", "io.github.modelcontextprotocol/time", "--yes"}},
		{name: "pypi-choice-prompted", args: []string{"add", "io.github.modelcontextprotocol/time"},
			tty:     &fakeTTY{answers: [][2]string{{"local-timezone", "Europe/Paris"}, {"Add it?", "yes"}}},
			prompts: []string{"argument local-timezone (IANA timezone to use instead of the system's) [default UTC]: ", "Add it? [y/N] "}},
		{name: "remote-header-secret", args: []string{"add", "io.github.user/remote-weather@2.1.0"},
			tty:     &fakeTTY{answers: [][2]string{{"Authorization", "Bearer wx-token"}, {"Add it?", "y"}}},
			secrets: map[string]string{"remote-weather.Authorization": "Bearer wx-token"},
			prompts: []string{"hidden: header Authorization (Bearer token) (hidden): ", "Add it? [y/N] "}},
		{name: "remote-var-secret", args: []string{"add", "io.github.github/github-mcp-server", "--var", "token=ghp_test", "--yes"},
			secrets: map[string]string{"github-mcp-server.token": "ghp_test"}},
		{name: "oci-chosen", args: []string{"add", "io.github.github/github-mcp-server", "--package", "oci", "--name", "gh", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_oci", "--yes"},
			secrets: map[string]string{"gh.GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_oci"}},
		{name: "oci-only-runtime-args", args: []string{"add", "io.github.example/database-manager", "--var", "db_type=postgres", "--var", "database_name=app",
			"--env", "DB_USERNAME=${USER}", "--env", "DB_PASSWORD=s3cret", "--env", "SSL_MODE=require", "--yes"},
			secrets: map[string]string{"database-manager.DB_PASSWORD": "s3cret"}},
		{name: "npm-filepath", args: []string{"add", "io.github.modelcontextprotocol/filesystem", "--var", "allowed_dir=" + shared, "--yes"}},
		{name: "oci-mount-vars", args: []string{"add", "io.github.modelcontextprotocol/filesystem", "--package", "oci", "--var", "source_path=" + shared, "--yes"}},
		{name: "older-version", args: []string{"add", "io.github.modelcontextprotocol/everything@2026.1.14", "--name", "memory", "--yes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeStart(t, dir, reg.URL)
			secrets := &memSecrets{}
			var tty prompter
			if c.tty != nil {
				tty = c.tty
			}
			args := append(slices.Clone(c.args), "--config", cfg)
			r := runInProc(t, dir, tty, secrets, args...)
			if c.name == "older-version" {
				// --name of a server the file has.
				if r.code != exitUsage || !strings.Contains(r.stderr, `already has a server "memory"`) {
					t.Fatalf("add --name memory: exit %d\n%s", r.code, r.stderr)
				}
				args = append(slices.Clone(c.args[:2]), "--yes", "--config", cfg)
				r = runInProc(t, dir, tty, secrets, args...)
			}
			if r.code != 0 {
				t.Fatalf("add: exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			got := must(os.ReadFile(cfg))
			norm := strings.ReplaceAll(string(got), reg.URL, "REGISTRY")
			// YAML quotes a Windows path ('C:\…'), not a Unix one: the
			// same value either way.
			norm = strings.ReplaceAll(norm, "'"+shared+"'", shared)
			norm = strings.ReplaceAll(norm, shared, "SHARED")
			golden := filepath.Join("testdata", "add", c.name+".yaml")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, []byte(norm), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := string(must(os.ReadFile(golden))); norm != want {
				t.Errorf("the configuration after add differs from %s:\n--- got\n%s\n--- want\n%s", golden, norm, want)
			}
			if !maps.Equal(secrets.m, c.secrets) {
				t.Errorf("secrets stored: %v, want %v", secrets.m, c.secrets)
			}
			for v := range maps.Values(secrets.m) {
				if strings.Contains(string(got), v) || strings.Contains(r.stderr+r.stdout, v) {
					t.Errorf("the secret %q is in the file or the output", v)
				}
			}
			if c.tty != nil && !slices.Equal(c.tty.asked, c.prompts) {
				t.Errorf("prompts: %q, want %q", c.tty.asked, c.prompts)
			}
			if !strings.Contains(r.stderr, "trust: approve") || !strings.Contains(r.stderr, "runs: ") && !strings.Contains(r.stderr, "connects to: ") {
				t.Errorf("add did not say what it will run:\n%s", r.stderr)
			}
		})
	}
}

// TestAddBadInput: what cannot be added is refused with an error that
// says why, and the configuration is left byte for byte as it was.
func TestAddBadInput(t *testing.T) {
	reg := fixtureRegistry(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there now
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(slow.Close)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Welcome to nginx!</body></html>")
	}))
	t.Cleanup(garbage.Close)
	cases := []struct {
		name, url string
		args      []string
		tty       *fakeTTY
		want      []string
	}{
		{"down", down.URL, []string{"add", "io.github.brave/brave-search-mcp-server", "--yes"}, nil, []string{"cannot be reached"}},
		{"slow", slow.URL, []string{"add", "io.github.brave/brave-search-mcp-server", "--yes"}, nil, []string{"did not answer within 300ms"}},
		{"garbage", garbage.URL, []string{"add", "io.github.brave/brave-search-mcp-server", "--yes"}, nil, []string{"not a registry response", "gateway.registry.url"}},
		{"unknown-registry-type", reg.URL, []string{"add", "io.github.example/cargo-tool", "--yes"}, nil, []string{`io.github.example/cargo-tool@0.3.0 has nothing add can run; it offers: cargo package cargo-mcp-tool (unknown registryType "cargo")` + "\n"}},
		{"mcpb", reg.URL, []string{"add", "io.modelcontextprotocol/text-editor", "--yes"}, nil, []string{"mcpb bundles are not supported"}},
		{"nuget", reg.URL, []string{"add", "io.github.joelverhagen/knapcode-samplemcpserver", "--yes"}, nil, []string{"nuget is not supported"}},
		{"no-such-package", reg.URL, []string{"add", "io.github.modelcontextprotocol/time", "--package", "npm", "--yes"}, nil, []string{"no npm package", "pypi package mcp-server-time"}},
		{"name-not-found", reg.URL, []string{"add", "io.github.nobody/nothing", "--yes"}, nil, []string{`no server named "io.github.nobody/nothing"`}},
		{"version-not-found", reg.URL, []string{"add", "io.github.modelcontextprotocol/everything@9.9.9", "--yes"}, nil, []string{`has no version "9.9.9"`, "2026.1.14, 2026.8.31"}},
		{"missing-inputs", reg.URL, []string{"add", "io.github.example/database-manager", "--yes"}, nil,
			[]string{"--var db_type=VALUE", "one of postgres, mysql, mongodb, redis", "--var database_name=VALUE", "--env DB_USERNAME=VALUE", "--env DB_PASSWORD=VALUE", "secret"}},
		{"bad-choice", reg.URL, []string{"add", "io.github.brave/brave-search-mcp-server", "--env", "BRAVE_API_KEY=k", "--env", "BRAVE_MCP_LOG_LEVEL=verbose", "--yes"}, nil,
			[]string{"BRAVE_MCP_LOG_LEVEL must be one of debug, info, warning, error"}},
		{"var-in-url", reg.URL, []string{"add", "io.github.user/remote-weather", "--header", "Authorization=x", "--var", "host=${HOME}", "--yes"}, nil,
			[]string{"would not load", "must be an http or https URL"}},
		{"no-terminal-no-yes", reg.URL, []string{"add", "io.github.modelcontextprotocol/time"}, nil, []string{"pass --yes"}},
		{"declined", reg.URL, []string{"add", "io.github.modelcontextprotocol/time"}, &fakeTTY{answers: [][2]string{{"local-timezone", ""}, {"Add it?", "n"}}}, []string{"nothing written"}},
		{"interrupted-at-confirm", reg.URL, []string{"add", "io.github.brave/brave-search-mcp-server"},
			&fakeTTY{answers: [][2]string{{"BRAVE_API_KEY", "BSA-k"}}, interrupt: "Add it?"}, []string{"interrupted; nothing written"}},
		{"interrupted-at-secret", reg.URL, []string{"add", "io.github.brave/brave-search-mcp-server"},
			&fakeTTY{interrupt: "BRAVE_API_KEY"}, []string{"interrupted; nothing written"}},
	}
	edited := &fakeTTY{answers: [][2]string{{"local-timezone", ""}, {"Add it?", "y"}}}
	cases = append(cases, struct {
		name, url string
		args      []string
		tty       *fakeTTY
		want      []string
	}{"edited-while-asking", reg.URL, []string{"add", "io.github.modelcontextprotocol/time"}, edited, []string{"changed while add ran; nothing written"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeStart(t, dir, c.url)
			if c.tty == edited {
				// The user saves the file while add waits for the answer.
				edited.onAsk = func(p string) {
					if strings.HasPrefix(p, "Add it?") {
						os.WriteFile(cfg, []byte(strings.Replace(addBaseConfig, "REGISTRY", c.url, 1)+"# edited\n"), 0o600)
					}
				}
			}
			if c.name == "slow" {
				before := string(must(os.ReadFile(cfg)))
				os.WriteFile(cfg, []byte(strings.Replace(before, "registry: {url: "+c.url+"}", "registry: {url: "+c.url+", timeout_ms: 300}", 1)), 0o600)
			}
			before := must(os.ReadFile(cfg))
			secrets := &memSecrets{}
			var tty prompter
			if c.tty != nil {
				tty = c.tty
			}
			r := runInProc(t, t.TempDir(), tty, secrets, append(slices.Clone(c.args), "--config", cfg)...)
			if r.code == 0 {
				t.Fatalf("add succeeded:\n%s", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("the error does not say %q:\n%s", w, r.stderr)
				}
			}
			if c.tty == edited {
				before = append(before, "# edited\n"...)
			}
			if after := must(os.ReadFile(cfg)); !bytes.Equal(after, before) {
				t.Errorf("the configuration changed:\n%s", after)
			}
			if len(secrets.m) > 0 {
				t.Errorf("secrets stored: %v", secrets.m)
			}
			if ents := must(os.ReadDir(dir)); len(ents) != 1 {
				t.Errorf("files left beside the configuration: %v", ents)
			}
		})
	}
}

// TestSearch: the search follows the cursor over pages, prints name,
// version, transports and description, and answers from the cache,
// saying so, when the registry is down.
func TestSearch(t *testing.T) {
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	cfg := writeStart(t, dir, reg.URL)
	r := runInProc(t, dir, nil, nil, "search", "io.github", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("search: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"io.github.brave/brave-search-mcp-server", "2.0.58", "npm", "Web, local, image",
		"io.github.github/github-mcp-server", "streamable-http, oci",
		"io.github.modelcontextprotocol/everything  ", "2026.8.31",
		"io.github.user/remote-weather", "sse, streamable-http",
		"io.github.modelcontextprotocol/time", "pypi",
		"9 servers",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("search output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "2026.1.14") {
		t.Errorf("search lists a version that is not the latest:\n%s", r.stdout)
	}
	if n := reg.Requests.Load(); n < 3 {
		t.Errorf("9 servers in pages of 3 took %d requests", n)
	}
	online := r.stdout
	reg.Close()
	r = runInProc(t, dir, nil, nil, "search", "io.github", "--config", cfg)
	if r.code != 0 || r.stdout != online || !strings.Contains(r.stderr, "offline:") || !strings.Contains(r.stderr, "cannot be reached") {
		t.Fatalf("search with the registry down: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runInProc(t, dir, nil, nil, "search", "never-searched", "--config", cfg)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot be reached") {
		t.Fatalf("search never cached, registry down: exit %d\n%s", r.code, r.stderr)
	}
}

// TestRegistryArgs: search's and add's command lines, and what is wrong
// with a bad one.
func TestRegistryArgs(t *testing.T) {
	inv, err := parseRegistryArgs([]string{"--config", "c.yaml", "add", "io.github.x/y@1.2.3", "--env", "A=1=2", "--env=B=", "--header", "H=v", "--var", "v=w", "--package", "pypi", "--name", "n", "-y"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.command != "add" || inv.name != "io.github.x/y" || inv.version != "1.2.3" || inv.configPath != "c.yaml" || inv.via != "pypi" || inv.serverName != "n" || !inv.yes ||
		inv.env["A"] != "1=2" || inv.env["B"] != "" || len(inv.env) != 2 || inv.headers["H"] != "v" || inv.vars["v"] != "w" {
		t.Errorf("parsed: %+v", inv)
	}
	if !registryCommand([]string{"-c", "search", "search"}) || registryCommand([]string{"call", "add"}) || registryCommand([]string{"--config", "add", "tools"}) {
		t.Error("registryCommand misreads which command a line is")
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"add"}, "add needs one server name"},
		{[]string{"add", "a", "b"}, "add needs one server name"},
		{[]string{"add", "@1.0"}, "add takes NAME[@VERSION]"},
		{[]string{"add", "x", "--package", "cargo"}, "--package must be npm, pypi or oci"},
		{[]string{"add", "x", "--remote", "--package", "npm"}, "give one"},
		{[]string{"add", "x", "--env", "NOVALUE"}, "--env takes NAME=VALUE"},
		{[]string{"add", "x", "--env"}, "--env needs NAME=VALUE"},
		{[]string{"add", "x", "--json"}, "--json belongs to search"},
		{[]string{"add", "x", "--yse"}, `unknown flag --yse; did you mean --yes?`},
		{[]string{"search", "a", "b"}, "search takes one TEXT"},
		{[]string{"search", "a", "--yes"}, "belong to add"},
	} {
		if _, err := parseRegistryArgs(bad.args); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.args, err, bad.want)
		}
	}
}

// TestServerNameOf: the name add gives a server.
func TestServerNameOf(t *testing.T) {
	for _, c := range []struct {
		name  string
		taken []string
		want  string
	}{
		{"io.github.brave/brave-search-mcp-server", nil, "brave-search-mcp-server"},
		{"io.github.x/memory", []string{"memory", "memory-2"}, "memory-3"},
		{"io.github.x/a.b c", nil, "a-b-c"},
		{"io.github.x/...", nil, "server"},
	} {
		if got := serverNameOf(c.name, c.taken); got != c.want {
			t.Errorf("serverNameOf(%q, %q) = %q, want %q", c.name, c.taken, got, c.want)
		}
	}
}

// TestAddShowsEscapes: what add says it will run shows the control
// characters and invisible ones an entry holds as escapes: the publisher's
// text cannot rewrite the terminal over it.
func TestAddShowsEscapes(t *testing.T) {
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	cfg := writeStart(t, dir, reg.URL)
	r := runInProc(t, t.TempDir(), nil, nil, "add", "com.example/escapes", "--yes", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("add: exit %d\n%s", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\x1b\x07\u202e") {
		t.Errorf("add wrote control characters to the terminal:\n%q", r.stderr)
	}
	for _, want := range []string{`runs: npx -y escapes-mcp@1.0.0 "--title=\x1b]0;pwned\a"`, `env MODE="a\u202eb"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("add does not show %s:\n%s", want, r.stderr)
		}
	}
}

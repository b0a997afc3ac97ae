package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefaultsWithoutFile(t *testing.T) {
	home := t.TempDir() // no ~/.config/mcp-gateway/config.yaml
	c, s, err := Load(LoadOptions{Home: home, Env: mapEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Policy.System.Path = filepath.Join(home, ".config/mcp-gateway/policy.md")
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config without file:\n got %+v\nwant %+v", c, want)
	}
	if !s.Defaults || s.YAML != nil || s.Env == nil || len(s.Env) != 0 || s.CLI == nil || len(s.CLI) != 0 || s.Warnings != nil {
		t.Errorf("sources = %+v", s)
	}
}

func TestNilEnvAndNoHome(t *testing.T) {
	c, _, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKey != "" || c.Policy.System.Path != "~/.config/mcp-gateway/policy.md" {
		t.Errorf("got %+v", c)
	}
}

// LoadOptions.Data is read instead of the file, which Path only names.
func TestLoadData(t *testing.T) {
	c, s, err := Load(LoadOptions{Path: "nowhere/config.yaml", Data: []byte("policy: {max_citations: 7}\n")})
	if err != nil || c.Policy.MaxCitations != 7 || s.YAML == nil || *s.YAML != "nowhere/config.yaml" {
		t.Fatalf("Load = %v, %v, %v", c, s, err)
	}
	_, _, err = Load(LoadOptions{Path: "nowhere/config.yaml", Data: []byte("policy: {max_citations: x}\n")})
	if got, want := fmt.Sprint(err), "nowhere/config.yaml:1: policy.max_citations: must be an integer"; !strings.HasPrefix(got, want) {
		t.Errorf("error = %q, want %q...", got, want)
	}
}

func TestDefaultPathIsRead(t *testing.T) {
	home := t.TempDir()
	p := DefaultPath(home)
	if want := filepath.Join(home, ".config", "mcp-gateway", "config.yaml"); p != want {
		t.Fatalf("DefaultPath = %q, want %q", p, want)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("policy: {max_citations: 7}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, s, err := Load(LoadOptions{Home: home, Env: mapEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.MaxCitations != 7 || s.YAML == nil || *s.YAML != p {
		t.Errorf("max_citations = %d, sources.yaml = %v", c.Policy.MaxCitations, s.YAML)
	}
}

func TestMissingExplicitPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, _, err := Load(LoadOptions{Path: p, Env: mapEnv(nil)})
	var e *Error
	if !errors.As(err, &e) || e.File != p {
		t.Fatalf("err = %v; want *Error naming %s", err, p)
	}
	if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err = %v; want it to say the file does not exist", err)
	}
}

func TestExplicitPathIsDirectory(t *testing.T) {
	_, _, err := Load(LoadOptions{Path: t.TempDir(), Env: mapEnv(nil)})
	checkOnlyErrors(t, err)
}

func TestExplicitPathTilde(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "gw.yaml"), []byte("request: {max_retries: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load(LoadOptions{Path: "~/gw.yaml", Home: home, Env: mapEnv(nil)})
	if err != nil || c.Request.MaxRetries != 1 {
		t.Fatalf("Load(~/gw.yaml) = %v, %v", c, err)
	}
}

func TestEmptyFiles(t *testing.T) {
	for name, text := range map[string]string{
		"empty":    "",
		"comments": "# nothing here\n\n# at all\n",
		"null":     "~\n",
		"document": "---\n",
		"bom":      "\ufeff# with a BOM\nrequest: {max_retries: 2}\n",
		"emptymap": "{}\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, s := mustLoad(t, text, nil, Flags{})
			if s.YAML == nil {
				t.Error("sources.yaml is null; want the path")
			}
			if name == "bom" && c.Request.MaxRetries != 2 {
				t.Errorf("max_retries = %d", c.Request.MaxRetries)
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	yaml := `
policy: {max_citations: 5}
server: {debug: false, debug_file: /from/yaml.log}
gateway: {default_timeout_ms: 10000, http: {listen: "127.0.0.1:7000"}}
model_profiles: {answer: {model: yaml-model}}
`
	tests := []struct {
		name  string
		yaml  string
		env   map[string]string
		flags Flags
		check func(*Config) bool
	}{
		{"default", "", nil, Flags{}, func(c *Config) bool { return c.Policy.MaxCitations == 3 }},
		{"yaml over default", yaml, nil, Flags{}, func(c *Config) bool { return c.Policy.MaxCitations == 5 }},
		{"env over yaml", yaml, map[string]string{"MAX_CITATIONS": "7"}, Flags{}, func(c *Config) bool { return c.Policy.MaxCitations == 7 }},
		{"env over default", "", map[string]string{"MAX_CITATIONS": "9"}, Flags{}, func(c *Config) bool { return c.Policy.MaxCitations == 9 }},
		{"env model over yaml", yaml, map[string]string{"MODEL_ANSWER": "env-model"}, Flags{}, func(c *Config) bool { return c.ModelProfiles["answer"].Model == "env-model" }},
		{"env timeout over yaml", yaml, map[string]string{"DEFAULT_TIMEOUT": "45s"}, Flags{}, func(c *Config) bool { return c.Gateway.DefaultTimeoutMS == 45000 }},
		{"yaml timeout", yaml, nil, Flags{}, func(c *Config) bool { return c.Gateway.DefaultTimeoutMS == 10000 }},
		{"env debug over yaml", yaml, map[string]string{"DEBUG": "1"}, Flags{}, func(c *Config) bool {
			return c.Server.Debug && c.Server.DebugFile == "/from/yaml.log"
		}},
		{"cli debug over env off", yaml, map[string]string{"DEBUG": "0"}, Flags{Debug: true}, func(c *Config) bool { return c.Server.Debug }},
		{"cli debug file over env file", yaml, map[string]string{"DEBUG": "/from/env.log"}, Flags{DebugFile: "/from/cli.log"}, func(c *Config) bool {
			return c.Server.Debug && c.Server.DebugFile == "/from/cli.log"
		}},
		{"env debug file over yaml", yaml, map[string]string{"DEBUG": "/from/env.log"}, Flags{}, func(c *Config) bool {
			return c.Server.Debug && c.Server.DebugFile == "/from/env.log"
		}},
		{"cli listen over yaml", yaml, nil, Flags{Listen: "0.0.0.0:9999"}, func(c *Config) bool { return c.Gateway.HTTP.Listen == "0.0.0.0:9999" }},
		{"yaml listen", yaml, nil, Flags{}, func(c *Config) bool { return c.Gateway.HTTP.Listen == "127.0.0.1:7000" }},
		{"empty env is unset", yaml, map[string]string{"MAX_CITATIONS": "", "DEBUG": ""}, Flags{}, func(c *Config) bool {
			return c.Policy.MaxCitations == 5 && !c.Server.Debug
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := mustLoad(t, tt.yaml, tt.env, tt.flags)
			if !tt.check(c) {
				t.Errorf("unexpected config: %+v", c)
			}
		})
	}
}

func TestSourcesEnvAndCLI(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY":  "sk-secret-value",
		"MAX_CITATIONS":   "4",
		"DEBUG":           "true",
		"DEFAULT_TIMEOUT": "1000",
		"UNRELATED":       "x",
		"MODEL_ANSWER":    "",
	}
	_, s := mustLoad(t, "", env, Flags{Debug: true, Listen: "127.0.0.1:1"})
	if want := []string{"DEBUG", "DEFAULT_TIMEOUT", "MAX_CITATIONS", "OPENAI_API_KEY"}; !slices.Equal(s.Env, want) {
		t.Errorf("sources.env = %q, want %q", s.Env, want)
	}
	if want := []string{"--debug", "--listen"}; !slices.Equal(s.CLI, want) {
		t.Errorf("sources.cli = %q, want %q", s.CLI, want)
	}
}

func TestDeepMerge(t *testing.T) {
	c, _ := mustLoad(t, `
openai: {base_url: "https://proxy.example.com/v1"}
request: {max_retries: 0}
model_profiles:
  answer: {verbosity: high}
  answer_detailed: {verbosity: low}
policy: {system: {merge: prepend}}
gateway: {http: {stateless: true}}
`, nil, Flags{})
	d := Defaults()
	if c.OpenAI.APIKeyEnv != d.OpenAI.APIKeyEnv || c.OpenAI.BaseURL != "https://proxy.example.com/v1" {
		t.Errorf("openai = %+v", c.OpenAI)
	}
	if c.Request.TimeoutMS != d.Request.TimeoutMS || c.Request.MaxRetries != 0 {
		t.Errorf("request = %+v", c.Request)
	}
	if got, want := c.ModelProfiles["answer"], (Profile{Model: "gpt-5.5", ReasoningEffort: "medium", Verbosity: "high"}); got != want {
		t.Errorf("answer = %+v, want %+v", got, want)
	}
	if got, want := c.ModelProfiles["answer_detailed"], (Profile{ReasoningEffort: "high", Verbosity: "low"}); got != want {
		t.Errorf("answer_detailed = %+v, want %+v", got, want)
	}
	if got, want := c.Profile("answer_detailed"), (Profile{Model: "gpt-5.5", ReasoningEffort: "high", Verbosity: "low"}); got != want {
		t.Errorf("Profile(answer_detailed) = %+v, want %+v", got, want)
	}
	if got, want := c.Profile("answer_quick"), (Profile{Model: "gpt-5.5", ReasoningEffort: "low", Verbosity: "low"}); got != want {
		t.Errorf("Profile(answer_quick) = %+v, want %+v", got, want)
	}
	if c.Policy.System.Source != "builtin" || c.Policy.System.Merge != "prepend" || c.Policy.MaxCitations != 3 {
		t.Errorf("policy = %+v", c.Policy)
	}
	if !c.Gateway.HTTP.Stateless || c.Gateway.HTTP.Listen != "127.0.0.1:8000" || c.Gateway.Separator != "." {
		t.Errorf("gateway = %+v", c.Gateway)
	}
}

func TestArraysAndNullReplace(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(*Config) bool
	}{
		{"list replaces", "search: {defaults: {domains: [a.example, b.example]}}", func(c *Config) bool {
			return slices.Equal(c.Search.Defaults.Domains, []string{"a.example", "b.example"}) && c.Search.Defaults.MaxResults == 5
		}},
		{"null list is empty", "search: {defaults: {domains: null}}", func(c *Config) bool {
			return c.Search.Defaults.Domains != nil && len(c.Search.Defaults.Domains) == 0
		}},
		{"empty list", "gateway: {http: {allowed_origins: []}}", func(c *Config) bool {
			return c.Gateway.HTTP.AllowedOrigins != nil && len(c.Gateway.HTTP.AllowedOrigins) == 0
		}},
		{"null string", "server: {debug_file: null}", func(c *Config) bool { return c.Server.DebugFile == "" }},
		{"tilde string", "server: {debug_file: ~/dbg.log}", func(c *Config) bool { return c.Server.DebugFile == filepath.FromSlash("/home/me/dbg.log") }},
		{"null bool", "gateway: {answer_tools: null}", func(c *Config) bool { return !c.Gateway.AnswerTools }},
		{"null section keeps defaults", "gateway:\nserver:\n", func(c *Config) bool {
			return c.Gateway.Separator == "." && c.Gateway.AnswerTools
		}},
		{"null profile inherits answer", "model_profiles: {answer_quick: null, answer_detailed: ~}", func(c *Config) bool {
			_, q := c.ModelProfiles["answer_quick"]
			_, d := c.ModelProfiles["answer_detailed"]
			return !q && !d && c.Profile("answer_quick") == c.ModelProfiles["answer"]
		}},
		{"null servers", "servers: null\nmcpServers: ~\n", func(c *Config) bool { return c.Servers != nil && len(c.Servers) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := mustLoad(t, tt.yaml, nil, Flags{})
			if !tt.check(c) {
				t.Errorf("unexpected config: %+v", c)
			}
		})
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	c, _ := mustLoad(t, `
x-common: &common
  command: npx
  restart: never
servers:
  - <<: *common
    name: a
    args: [-y, a]
  - <<: *common
    name: b
    restart: on-failure
`, nil, Flags{})
	if len(c.Servers) != 2 {
		t.Fatalf("servers = %+v", c.Servers)
	}
	a, b := c.Servers[0], c.Servers[1]
	if a.Name != "a" || a.Command != "npx" || a.Restart != "never" || !slices.Equal(a.Args, []string{"-y", "a"}) {
		t.Errorf("a = %+v", a)
	}
	if b.Name != "b" || b.Command != "npx" || b.Restart != "on-failure" {
		t.Errorf("b = %+v (explicit keys must win over merged ones)", b)
	}
}

func TestPinsFile(t *testing.T) {
	read := func(p string) *Sources { return &Sources{YAML: &p} }
	home := filepath.FromSlash("/home/me")
	for _, tc := range []struct {
		pins string
		src  *Sources
		want string
	}{
		{"", read(filepath.FromSlash("/etc/gw/config.yaml")), "/etc/gw/config.pins.json"},
		{"", read(filepath.FromSlash("/x/claude_desktop_config.json")), "/x/claude_desktop_config.pins.json"},
		{"", read(filepath.FromSlash("/x/.gateway")), "/x/.gateway.pins.json"},
		{"", nil, "/home/me/.config/mcp-gateway/config.pins.json"},
		{filepath.FromSlash("/p/pins.json"), read("/etc/gw/config.yaml"), "/p/pins.json"},
	} {
		c := Defaults()
		c.Gateway.Pins = tc.pins
		if got := PinsFile(c, tc.src, home); got != filepath.FromSlash(tc.want) {
			t.Errorf("PinsFile(pins %q) = %q, want %q", tc.pins, got, filepath.FromSlash(tc.want))
		}
	}
}

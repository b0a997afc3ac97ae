package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestServersBothForms(t *testing.T) {
	c, _, p, err := loadText(t, `servers:
  - name: zeta
    command: zeta-server
  - name: alpha
    url: https://example.com/mcp
    prefix: ""
mcpServers:
  memory: {command: npx, args: [-y, "@modelcontextprotocol/server-memory"]}
  beta:
    command: beta
    envs: {A: "1"}
    enabled: false
    prefix: b
    timeout_ms: 5000
    restart: never
    tools: {include: ["get_*"], exclude: [get_secret]}
`, nil, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"zeta", "alpha", "beta", "memory"}; !slices.Equal(names, want) {
		t.Fatalf("server order = %q, want %q (list first, then the map by name)", names, want)
	}
	zeta, alpha, beta, memory := c.Servers[0], c.Servers[1], c.Servers[2], c.Servers[3]
	if !zeta.Enabled || zeta.Restart != "on-failure" || zeta.Prefix != "zeta" || zeta.Source != p+":2" {
		t.Errorf("zeta = %+v", zeta)
	}
	if alpha.Prefix != "" || alpha.URL != "https://example.com/mcp" || alpha.Command != "" {
		t.Errorf("alpha = %+v (explicit empty prefix must stay empty)", alpha)
	}
	if beta.Enabled || beta.Prefix != "b" || beta.Env["A"] != "1" || beta.TimeoutMS != 5000 || beta.Restart != "never" ||
		!slices.Equal(beta.Tools.Include, []string{"get_*"}) || !slices.Equal(beta.Tools.Exclude, []string{"get_secret"}) {
		t.Errorf("beta = %+v", beta)
	}
	if memory.Prefix != "memory" || !slices.Equal(memory.Args, []string{"-y", "@modelcontextprotocol/server-memory"}) || memory.Source != p+":8" {
		t.Errorf("memory = %+v", memory)
	}
	if got := CallTimeout(beta, c.DefaultTimeout()).Milliseconds(); got != 5000 {
		t.Errorf("CallTimeout(beta) = %dms", got)
	}
	if got := CallTimeout(zeta, c.DefaultTimeout()).Milliseconds(); got != 30000 {
		t.Errorf("CallTimeout(zeta) = %dms", got)
	}
}

func TestClientFiles(t *testing.T) {
	env := mapEnv(map[string]string{"REMOTE_TOKEN": "tok-123"})
	t.Run("claude desktop", func(t *testing.T) {
		c, s, err := Load(LoadOptions{Path: "testdata/claude_desktop_config.json", Env: env})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]Server{}
		for _, sv := range c.Servers {
			byName[sv.Name] = sv
		}
		if len(c.Servers) != 4 || c.Servers[0].Name != "filesystem" {
			t.Fatalf("servers = %+v", c.Servers)
		}
		if sv := byName["old"]; sv.Enabled {
			t.Errorf("disabled: true gave %+v", sv)
		}
		if sv := byName["remote-sse"]; sv.Transport != "sse" || sv.Headers["Authorization"] != "Bearer tok-123" {
			t.Errorf("remote-sse = %+v", sv)
		}
		if sv := byName["github"]; sv.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_literalTokenInFile" {
			t.Errorf("github = %+v", sv)
		}
		if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "globalShortcut") {
			t.Errorf("warnings = %q", s.Warnings)
		}
	})
	t.Run("vs code", func(t *testing.T) {
		c, s, err := Load(LoadOptions{Path: "testdata/vscode_mcp.json", Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Servers) != 2 || c.Servers[0].Name != "docs" || c.Servers[0].Transport != "http" || c.Servers[1].Transport != "stdio" {
			t.Errorf("servers = %+v", c.Servers)
		}
		if len(s.Warnings) != 2 {
			t.Errorf("warnings = %q", s.Warnings)
		}
	})
	t.Run("seed gateway", func(t *testing.T) {
		c, _, err := Load(LoadOptions{Path: "testdata/seed_gateway.yaml", Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if c.Servers[0].Env["MODE"] != "production" || c.Servers[1].TimeoutMS != 60000 {
			t.Errorf("servers = %+v", c.Servers)
		}
	})
	t.Run("full", func(t *testing.T) {
		c, _, err := Load(LoadOptions{Path: "testdata/full.yaml", Home: "/home/me", Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if c.Gateway.StrictNames != "true" || c.Gateway.ToolsMode != "lazy" || len(c.Servers) != 4 || c.Servers[0].Cwd != filepath.FromSlash("/home/me/work") {
			t.Errorf("config = %+v", c)
		}
	})
	t.Run("claude code types", func(t *testing.T) {
		for typ, want := range map[string]string{"http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"} {
			c, _ := mustLoad(t, fmt.Sprintf(`{"mcpServers": {"r": {"type": %q, "url": "http://localhost:1/mcp"}}}`, typ), nil, Flags{})
			if c.Servers[0].Transport != want {
				t.Errorf("type %s → %q, want %q", typ, c.Servers[0].Transport, want)
			}
		}
	})
}

func TestClientKeysAreWarnings(t *testing.T) {
	_, s := mustLoad(t, `{
  "preferences": {"x": 1},
  "$schema": "https://example.com/schema.json",
  "x-anchors": {"a": 1},
  "mcpServers": {"c": {"command": "c", "autoApprove": [], "alwaysAllow": ["x"], "timeout": 60}}
}`, nil, Flags{})
	joined := strings.Join(s.Warnings, "\n")
	for _, want := range []string{":2: preferences: ignored", "mcpServers.c.autoApprove: ignored", "mcpServers.c.alwaysAllow: ignored", "mcpServers.c.timeout: is in milliseconds"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if len(s.Warnings) != 4 {
		t.Errorf("warnings = %q", s.Warnings)
	}
}

func TestServerErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		key        string
		line       int
		msg        string
	}{
		{"no name", "servers:\n  - command: x\n", "servers[0].name", 2, "required"},
		{"bad name", "servers:\n  - name: a.b\n    command: x\n", "servers[0].name", 2, "may hold only"},
		{"bad map name", "mcpServers:\n  \"a b\": {command: x}\n", "mcpServers.a b.name", 2, "may hold only"},
		{"duplicate", "servers:\n  - {name: a, command: x}\nmcpServers:\n  a: {command: y}\n", "mcpServers.a", 4, "duplicate server name"},
		{"both", "servers:\n  - {name: a, command: x, url: http://h/}\n", "servers[0]", 2, "both command and url"},
		{"neither", "mcpServers:\n  a: {args: [x]}\n", "mcpServers.a", 2, "needs command"},
		{"null entry", "mcpServers:\n  a:\n", "mcpServers.a", 2, "not null"},
		{"bad url", "mcpServers:\n  a: {url: ftp://h/x}\n", "mcpServers.a.url", 2, "http or https"},
		{"bad url alias", "mcpServers:\n  a: {serverUrl: h/x}\n", "mcpServers.a.serverUrl", 2, "http or https"},
		{"restart", "mcpServers:\n  a: {command: x, restart: always}\n", "mcpServers.a.restart", 2, "on-failure or never"},
		{"glob", "mcpServers:\n  a:\n    command: x\n    tools: {include: [\"[\"]}\n", "mcpServers.a.tools.include[0]", 4, "glob"},
		{"tools key", "mcpServers:\n  a:\n    command: x\n    tools: {only: [x]}\n", "mcpServers.a.tools.only", 4, "unknown key"},
		{"type", "mcpServers:\n  a: {command: x, type: websocket}\n", "mcpServers.a.type", 2, "must be stdio"},
		{"type stdio url", "mcpServers:\n  a: {url: http://h/, type: stdio}\n", "mcpServers.a.type", 2, "stdio needs command"},
		{"type sse command", "mcpServers:\n  a: {command: x, type: sse}\n", "mcpServers.a.type", 2, "needs url"},
		{"env and envs", "mcpServers:\n  a:\n    command: x\n    env: {A: b}\n    envs: {C: d}\n", "mcpServers.a.envs", 5, "both given"},
		{"name mismatch", "mcpServers:\n  a: {name: b, command: x}\n", "mcpServers.a.name", 2, "entry's key"},
		{"timeout", "mcpServers:\n  a: {command: x, timeout_ms: -1}\n", "mcpServers.a.timeout_ms", 2, "between 0"},
		{"prefix", "mcpServers:\n  a: {command: x, prefix: \"a/b\"}\n", "mcpServers.a.prefix", 2, "may hold only"},
		{"unknown", "mcpServers:\n  a: {command: x, argz: [y]}\n", "mcpServers.a.argz", 2, "did you mean args?"},
		{"servers scalar", "servers: 3\n", "servers", 1, "list of servers"},
		{"mcpServers list", "mcpServers: [a]\n", "mcpServers", 1, "mapping of names"},
		{"entry scalar", "servers: [x]\n", "servers[0]", 1, "must be a mapping"},
		{"env value list", "mcpServers:\n  a:\n    command: x\n    env: {A: [1]}\n", "mcpServers.a.env.A", 4, "must be a string"},
		{"header newline", "mcpServers:\n  a:\n    url: http://h/\n    headers: {X: \"a\\nb\"}\n", "mcpServers.a.headers.X", 4, "not a valid HTTP header"},
		{"bad expansion", "mcpServers:\n  a: {command: \"${X\"}\n", "mcpServers.a.command", 2, "unterminated"},
		{"vscode input", "mcpServers:\n  a:\n    command: x\n    env: {K: \"${input:key}\"}\n", "mcpServers.a.env.K", 4, "input prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := findErr(t, mustFail(t, tt.yaml, nil), tt.key)
			if e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %q (line %d); want line %d and %q", e.Error(), e.Line, tt.line, tt.msg)
			}
		})
	}
}

func TestExpansion(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cr3t", "DIR": "/srv", "EMPTY": "", "HOST": "api.example.com"}
	c, s, p, err := loadText(t, `servers:
  - name: a
    command: ${DIR}/bin/server
    args: ["--token=${TOKEN}", "${MISSING:-fallback}", "$${LITERAL}", "$HOME", "${EMPTY:-d}"]
    cwd: ${DIR}/work
    env: {T: "${TOKEN}", U: "${UNSET_VAR}", PLAIN: plain, V: "${env:TOKEN}"}
  - name: b
    url: https://${HOST}/mcp
    headers: {Authorization: "Bearer ${TOKEN}"}
  - name: c
    command: ~/bin/c
    cwd: ~/
`, env, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, cc := c.Servers[0], c.Servers[1], c.Servers[2]
	if a.Command != "/srv/bin/server" || a.Cwd != "/srv/work" {
		t.Errorf("a = %+v", a)
	}
	if want := []string{"--token=s3cr3t", "fallback", "${LITERAL}", "$HOME", "d"}; !slices.Equal(a.Args, want) {
		t.Errorf("args = %q, want %q", a.Args, want)
	}
	if a.Env["T"] != "s3cr3t" || a.Env["U"] != "" || a.Env["PLAIN"] != "plain" || a.Env["V"] != "s3cr3t" {
		t.Errorf("env = %q", a.Env)
	}
	if b.URL != "https://api.example.com/mcp" || b.Headers["Authorization"] != "Bearer s3cr3t" {
		t.Errorf("b = %+v", b)
	}
	if home := filepath.FromSlash("/home/me"); cc.Command != filepath.Join(home, "bin", "c") || cc.Cwd != home {
		t.Errorf("c = %+v", cc)
	}
	if len(s.Warnings) != 1 {
		t.Fatalf("warnings = %q", s.Warnings)
	}
	w := s.Warnings[0]
	if !strings.HasPrefix(w, p+":6: servers[0].env.U: ") || !strings.Contains(w, "UNSET_VAR") {
		t.Errorf("warning = %q; want file:line, key and the variable", w)
	}
	if strings.Contains(strings.Join(s.Warnings, ""), "s3cr3t") {
		t.Error("a warning holds a variable's value")
	}
}

func TestExpandVars(t *testing.T) {
	env := mapEnv(map[string]string{"A": "x", "B": ""})
	tests := []struct {
		in, out string
		unset   []string
		bad     bool
	}{
		{"plain", "plain", nil, false},
		{"${A}", "x", nil, false},
		{"${A}${A}-${A}", "xx-x", nil, false},
		{"${B}", "", []string{"B"}, false},
		{"${B:-def}", "def", nil, false},
		{"${C:-}", "", nil, false},
		{"${C}", "", []string{"C"}, false},
		{"a$b", "a$b", nil, false},
		{"$${A}", "${A}", nil, false},
		{"${A:-a:-b}", "x", nil, false},
		{"${", "", nil, true},
		{"${}", "", nil, true},
		{"${1X}", "", nil, true},
		{"${A B}", "", nil, true},
	}
	for _, tt := range tests {
		out, unset, bad := expandVars(tt.in, env)
		if (bad != "") != tt.bad || (!tt.bad && (out != tt.out || !slices.Equal(unset, tt.unset))) {
			t.Errorf("expandVars(%q) = %q, %q, %q; want %q, %q, bad=%v", tt.in, out, unset, bad, tt.out, tt.unset, tt.bad)
		}
	}
}

// A remote server's oauth: the gateway's keys, Gemini CLI's spellings, its
// other keys skipped with a warning, ${VAR} in the secret, and the secret
// masked in --show-config.
func TestServerOAuth(t *testing.T) {
	c, src := mustLoad(t, `mcpServers:
  corp:
    url: https://mcp.corp.example/mcp
    oauth: {client_id: gw, client_secret: "${CORP_SECRET}", client_metadata_url: "https://gw.example/client.json", scopes: [a, b]}
  gemini:
    httpUrl: https://g.example/mcp
    oauth: {enabled: true, clientId: gid, clientSecret: lit, tokenUrl: "https://t.example/token"}
`, map[string]string{"CORP_SECRET": "s3cret"}, Flags{})
	corp, gemini := c.Servers[0], c.Servers[1]
	want := OAuth{ClientID: "gw", ClientSecret: "s3cret", ClientMetadataURL: "https://gw.example/client.json", Scopes: []string{"a", "b"}}
	if corp.OAuth.ClientID != want.ClientID || corp.OAuth.ClientSecret != want.ClientSecret ||
		corp.OAuth.ClientMetadataURL != want.ClientMetadataURL || !slices.Equal(corp.OAuth.Scopes, want.Scopes) {
		t.Errorf("corp.oauth = %+v", corp.OAuth)
	}
	if gemini.OAuth.ClientID != "gid" || gemini.OAuth.ClientSecret != "lit" {
		t.Errorf("gemini.oauth = %+v", gemini.OAuth)
	}
	var warned []string
	for _, w := range src.Warnings {
		if strings.Contains(w, "oauth.") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "mcpServers.gemini.oauth.enabled") || !strings.Contains(warned[1], "oauth.tokenUrl") {
		t.Errorf("warnings = %q", warned)
	}
	var out strings.Builder
	if err := WriteShowConfig(&out, "test", c, src); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret") || strings.Contains(out.String(), `"lit"`) || !strings.Contains(out.String(), `"client_secret": "***"`) {
		t.Errorf("--show-config:\n%s", out.String())
	}
}

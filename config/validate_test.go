package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "config.yaml", Line: 14, Key: "gateway.tool_mode", Msg: "unknown key"}, "config.yaml:14: gateway.tool_mode: unknown key"},
		{Error{File: "config.yaml", Key: "servers", Msg: "m"}, "config.yaml: servers: m"},
		{Error{File: "config.yaml", Line: 3, Msg: "invalid YAML"}, "config.yaml:3: invalid YAML"},
		{Error{File: "config.yaml", Msg: "no such file"}, "config.yaml: no such file"},
		{Error{Key: "DEFAULT_TIMEOUT", Msg: "bad"}, "environment variable DEFAULT_TIMEOUT: bad"},
		{Error{Key: "--listen", Msg: "bad"}, "flag --listen: bad"},
		{Error{Key: "policy.max_citations", Msg: "bad"}, "policy.max_citations: bad"},
		{Error{Msg: "just this"}, "just this"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestUnknownKeyWithLine(t *testing.T) {
	text := strings.Repeat("# comment\n", 12) + "gateway:\n  tool_mode: lazy\n"
	_, _, p, err := loadText(t, text, nil, Flags{})
	want := p + ":14: gateway.tool_mode: unknown key (did you mean tools_mode?)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 14 || e.Key != "gateway.tool_mode" {
		t.Errorf("error = %#v", e)
	}
}

func TestSuggestions(t *testing.T) {
	tests := []struct{ yaml, key, suggestion string }{
		{"mcpservers: {}", "mcpservers", "mcpServers"},
		{"toolsMode: lazy", "toolsMode", ""}, // a gateway key at top level: no close top-level key
		{"gateway: {toolsMode: lazy}", "gateway.toolsMode", "tools_mode"},
		{"polcy: {}", "polcy", "policy"},
		{"model_profiles: {answr: {model: x}}", "model_profiles.answr", "answer"},
		{"openai: {base: x}", "openai.base", "base_url"},
		{"frobnicate: 1", "frobnicate", ""},
	}
	for _, tt := range tests {
		e := findErr(t, mustFail(t, tt.yaml, nil), tt.key)
		has := strings.Contains(e.Msg, "did you mean "+tt.suggestion+"?")
		if (tt.suggestion != "") != has && tt.suggestion != "" || tt.suggestion == "" && strings.Contains(e.Msg, "did you mean") {
			t.Errorf("%s: %q; want suggestion %q", tt.yaml, e.Msg, tt.suggestion)
		}
	}
}

func TestAPIKeyInFile(t *testing.T) {
	e := findErr(t, mustFail(t, "openai:\n  api_key: sk-do-not-echo\n", nil), "openai.api_key")
	if e.Line != 2 || !strings.Contains(e.Msg, "environment variable") || strings.Contains(e.Error(), "sk-do-not-echo") {
		t.Errorf("error = %q", e.Error())
	}
}

func TestTypeErrors(t *testing.T) {
	tests := []struct {
		yaml string
		key  string
		line int
		msg  string
	}{
		{"servers:\n  - name: a\n    command: x\n    args: -y\n", "servers[0].args", 4, "must be a list of strings"},
		{"servers:\n  - name: a\n    command: x\n    args: [a, {b: c}]\n", "servers[0].args[1]", 4, "must be a list of strings"},
		{"servers:\n  - name: a\n    command: x\n    args: [a, null]\n", "servers[0].args[1]", 4, "must be a list of strings"},
		{"request:\n  timeout_ms: soon\n", "request.timeout_ms", 2, "must be an integer"},
		{"request:\n  timeout_ms: 1.5\n", "request.timeout_ms", 2, "must be an integer"},
		{"request:\n  timeout_ms: 99999999999999999999\n", "request.timeout_ms", 2, "must be an integer"},
		{"request:\n  timeout_ms: 9999999999\n", "request.timeout_ms", 2, "out of range"},
		{"server:\n  debug: maybe\n", "server.debug", 2, "must be true or false"},
		{"server:\n  debug: [true]\n", "server.debug", 2, "must be true or false"},
		{"openai: [a]\n", "openai", 1, "must be a mapping"},
		{"openai:\n  base_url: {a: b}\n", "openai.base_url", 2, "must be a string"},
		{"search:\n  defaults:\n    domains: {a: b}\n", "search.defaults.domains", 3, "must be a list of strings"},
		{"mcpServers:\n  a:\n    command: x\n    env: [A=b]\n", "mcpServers.a.env", 4, "must be a mapping of strings"},
		{"gateway:\n  strict_names: [x]\n", "gateway.strict_names", 2, "must be auto, true or false"},
		{"gateway:\n  http: {max_sessions: 0}\n", "gateway.http.max_sessions", 2, "must be between 1 and 1000000"},
		{"gateway:\n  http:\n    max_streams: 2000000\n", "gateway.http.max_streams", 3, "must be between 1 and 1000000"},
		{"gateway:\n  http:\n    max_connections: -1\n", "gateway.http.max_connections", 3, "must be between 0 and 1000000"},
		{"gateway:\n  http:\n    max_connections_per_source: -1\n", "gateway.http.max_connections_per_source", 3, "must be between 0 and 1000000"},
		{"gateway:\n  http:\n    max_sessions_per_identity: 2000000\n", "gateway.http.max_sessions_per_identity", 3, "must be between 0 and 1000000"},
		{"request: {max_retries: 1}\nrequest: {max_retries: 2}\n", "request", 2, "duplicate key"},
		{"gateway:\n  separator: .\n  separator: _\n", "gateway.separator", 3, "duplicate key"},
		{"? [a]\n: b\n", "", 1, "keys must be strings"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			e := findErr(t, mustFail(t, tt.yaml, nil), tt.key)
			if e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %q (line %d); want line %d and %q", e.Error(), e.Line, tt.line, tt.msg)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		yaml string
		line int
	}{
		{"servers: [a,\n", 1},
		{"gateway:\n  http: {listen: x\n  a: b\n", 2}, // the unclosed brace's line
		{"a:\n  b: 1\n c: 2\n", 3},                    // the line that fits no indentation
		{"{\"mcpServers\": {\"a\": {\"command\": \"x\",}}", 0},
		{"a: 1\n---\nb: 2\n", 2},
		{"a: *nope\n", 0},
		{"a: \"\t\x00\"\n", 0},
	}
	for _, tt := range tests {
		errs := mustFail(t, tt.yaml, nil)
		if tt.line > 0 && errs[0].Line != tt.line || tt.line < 0 && errs[0].Line <= 0 {
			t.Errorf("%q: %q; want line %d", tt.yaml, errs[0].Error(), tt.line)
		}
	}
}

func TestManyErrorsSortedByLine(t *testing.T) {
	_, _, p, err := loadText(t, `policy:
  max_citations: 11
gateway:
  tool_mode: lazy
  separator: "/"
servers:
  - name: one
    command: echo
    args: -y
`, map[string]string{"DEFAULT_TIMEOUT": "nope"}, Flags{})
	checkOnlyErrors(t, err)
	want := []string{
		p + ":2: policy.max_citations: must be between 1 and 10, got 11",
		p + ":4: gateway.tool_mode: unknown key (did you mean tools_mode?)",
		p + ":5: gateway.separator: must be non-empty and hold only letters, digits, '_', '.' and '-', not \"/\"",
		p + `:9: servers[0].args: must be a list of strings, not the string "-y"`,
		`environment variable DEFAULT_TIMEOUT: must be milliseconds or a duration such as 45s, got "nope" (for gateway.default_timeout_ms)`,
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	errs := mustFail(t, b.String(), nil)
	if len(errs) != maxErrors+1 || !strings.Contains(errs[maxErrors].Msg, "30 more") {
		t.Errorf("%d errors; last %q", len(errs), errs[len(errs)-1])
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		yaml, key, msg string
		line           int
	}{
		{"policy: {max_citations: 0}", "policy.max_citations", "between 1 and 10", 1},
		{"model_profiles: {answer: {reasoning_effort: extreme}}", "model_profiles.answer.reasoning_effort", "none, minimal, low", 1},
		{"model_profiles: {answer_quick: {verbosity: terse}}", "model_profiles.answer_quick.verbosity", "low, medium or high", 1},
		{"model_profiles: {answer: {model: \"\"}}", "model_profiles.answer.model", "required", 1},
		{"model_profiles: {answer: null}", "model_profiles.answer.model", "required", 1},
		{"model_profiles: {answer_fast: {model: x}}", "model_profiles.answer_fast", "unknown profile", 1},
		{"model_profiles: {answer: {temperature: 1}}", "model_profiles.answer.temperature", "unknown key", 1},
		{"request: {timeout_ms: 0}", "request.timeout_ms", "between 1 and", 1},
		{"request: {max_retries: 11}", "request.max_retries", "between 0 and 10", 1},
		{"request: {max_retries: -1}", "request.max_retries", "between 0 and 10", 1},
		{"gateway: {strict_names: maybe}", "gateway.strict_names", "auto, true or false", 1},
		{"gateway: {tools_mode: lazzy}", "gateway.tools_mode", "full or lazy", 1},
		{"gateway: {code_mode: yes please}", "gateway.code_mode", "auto, true or false", 1},
		{"gateway:\n  code_mode_limits: {wall_ms: 0}", "gateway.code_mode_limits.wall_ms", "between 1 and", 2},
		{"gateway:\n  code_mode_limits:\n    memory_bytes: 1024", "gateway.code_mode_limits.memory_bytes", "between 1048576 and", 3},
		{"gateway: {code_mode_limits: {calls: 0}}", "gateway.code_mode_limits.calls", "between 1 and 100000", 1},
		{"gateway: {code_mode_limits: {output_bytes: 10}}", "gateway.code_mode_limits.output_bytes", "between 1024 and", 1},
		{"gateway: {code_mode_limits: {parallel: 65}}", "gateway.code_mode_limits.parallel", "between 1 and 64", 1},
		{"gateway: {code_mode_limits: {runs: 0}}", "gateway.code_mode_limits.runs", "between 1 and 1000", 1},
		{"gateway: {code_mode_limits: {runs_total: 0}}", "gateway.code_mode_limits.runs_total", "between 1 and 10000", 1},
		{"gateway: {separator: \"\"}", "gateway.separator", "non-empty", 1},
		{"gateway: {separator: \"::\"}", "gateway.separator", "only letters", 1},
		{"gateway: {default_timeout_ms: -1}", "gateway.default_timeout_ms", "between 1 and", 1},
		{"gateway: {startup_timeout_ms: 0}", "gateway.startup_timeout_ms", "between 1 and", 1},
		{"gateway: {http: {listen: \"8000\"}}", "gateway.http.listen", "host:port", 1},
		{"gateway: {http: {listen: \"h:99999\"}}", "gateway.http.listen", "port must be", 1},
		{"gateway: {http: {allowed_origins: [example.com]}}", "gateway.http.allowed_origins", "origin", 1},
		{"gateway: {http: {auth_token_env: \"my token\"}}", "gateway.http.auth_token_env", "variable name", 1},
		{"policy: {system: {source: web}}", "policy.system.source", "builtin or file", 1},
		{"policy: {system: {merge: overwrite}}", "policy.system.merge", "replace, prepend or append", 1},
		{"policy: {system: {source: file, path: null}}", "policy.system.path", "required", 1},
		{"openai: {base_url: \"ftp://x\"}", "openai.base_url", "http or https", 1},
		{"search: {defaults: {recency_days: 0}}", "search.defaults.recency_days", "between 1 and", 1},
		{"search: {defaults: {max_results: 1000}}", "search.defaults.max_results", "between 1 and", 1},
		{"search: {defaults: {domains: [\"\"]}}", "search.defaults.domains", "domain name", 1},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			e := findErr(t, mustFail(t, tt.yaml, nil), tt.key)
			if e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %q; want line %d and %q", e.Error(), tt.line, tt.msg)
			}
		})
	}
}

func TestValidValues(t *testing.T) {
	for _, text := range []string{
		"gateway: {strict_names: true}",
		"gateway: {strict_names: false}",
		"gateway: {strict_names: \"true\"}",
		"gateway: {strict_names: auto, tools_mode: lazy, separator: __}",
		"gateway: {code_mode: true, code_mode_limits: {wall_ms: 5000, memory_bytes: 16777216, calls: 10, output_bytes: 4096, parallel: 2}}",
		"gateway: {code_mode: false}",
		"gateway: {code_mode: auto}",
		"gateway: {separator: \"-\", http: {listen: \"[::1]:0\", allowed_origins: [\"*\", \"https://a.example\"]}}",
		"model_profiles: {answer: {reasoning_effort: none}, answer_quick: {reasoning_effort: minimal}}",
		"policy: {system: {source: file, path: /etc/policy.md, merge: prepend}}",
		"request: {timeout_ms: 1, max_retries: 0}",
		"request: {timeout_ms: 3.0e+5}",
	} {
		mustLoad(t, text, nil, Flags{})
	}
}

// TestServerNamedGateway: where patterns are read and the answer tools are
// on, no server may be named gateway: the patterns call the answer tools
// gateway.answer*, so a rule allowing a server named gateway allowed them
// too (and a deny of them denied its tools). It used to load.
func TestServerNamedGateway(t *testing.T) {
	const server = "servers:\n  - {name: gateway, command: x}\n"
	for _, gw := range []string{
		`gateway: {policy: {rules: [{name: b, when: "true", allow: [gateway]}]}}`,
		`gateway: {rate_limits: {tools: [{tools: [gateway.answer], per_minute: 6}]}}`,
		`gateway: {profiles: [{name: p, include: [gateway]}]}`,
	} {
		e := findErr(t, mustFail(t, gw+"\n"+server, nil), "servers")
		if !strings.Contains(e.Msg, `server named "gateway"`) || !strings.Contains(e.Msg, "rename it") {
			t.Errorf("%s: %q", gw, e.Msg)
		}
	}
	for _, text := range []string{
		server, // no patterns
		`gateway: {answer_tools: false, policy: {rules: [{name: b, when: "true", allow: [gateway]}]}}` + "\n" + server,
		`gateway: {policy: {rules: [{name: b, when: "true", allow: [gw]}]}}` + "\nservers:\n  - {name: gw, prefix: gateway, command: x}\n",
	} {
		mustLoad(t, text, nil, Flags{})
	}
}

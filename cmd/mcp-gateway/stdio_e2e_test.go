package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// emptyConfig has no backends: the answer tools alone.
const emptyConfig = "gateway: { startup_timeout_ms: 5000, first_start_wait_ms: 5000 }\n"

func TestStdioHandshakeFramed(t *testing.T) {
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(frame(initMsg))
	init := p.readFramed()
	res := init["result"].(map[string]any)
	if res["protocolVersion"] != "2025-06-18" {
		t.Errorf("protocolVersion = %v, want the client's 2025-06-18", res["protocolVersion"])
	}
	if res["serverInfo"].(map[string]any)["name"] != "mcp-gateway" {
		t.Errorf("serverInfo = %v", res["serverInfo"])
	}
	p.send(frame(initializedMsg))
	p.send(frame(listMsg))
	names := toolNames(t, p.readFramed())
	for _, want := range []string{"answer", "answer_detailed", "answer_quick"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list = %v, missing %s", names, want)
		}
	}
	p.send(frame(pingMsg))
	if pong := p.readFramed(); idOf(pong) != "99" || pong["result"] == nil {
		t.Errorf("ping reply = %v", pong)
	}
}

func TestStdioHandshakeLines(t *testing.T) {
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(initMsg + "\n" + initializedMsg + "\n" + listMsg + "\n")
	if got := p.readLine(); idOf(got) != "1" || got["result"] == nil {
		t.Fatalf("initialize reply = %v", got)
	}
	if names := toolNames(t, p.readLine()); len(names) != 3 {
		t.Errorf("tools/list = %v, want the three answer tools", names)
	}
	p.send(pingMsg + "\n")
	if pong := p.readLine(); idOf(pong) != "99" {
		t.Errorf("ping reply = %v", pong)
	}
}

// MCP_LINE_MODE=1 makes replies line-delimited even to a framed client.
func TestStdioLineModeEnv(t *testing.T) {
	p := startGateway(t, baseEnv(t, "MCP_LINE_MODE=1"), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(frame(initMsg))
	if got := p.readLine(); idOf(got) != "1" {
		t.Fatalf("initialize reply = %v", got)
	}
}

// A burst of good and bad inputs in one write: every input gets exactly one
// reply, and the parse errors keep their relative order.
func TestStdioBurst(t *testing.T) {
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	var b strings.Builder
	b.WriteString(frame(initMsg))
	b.WriteString(frame(initializedMsg))
	want := map[string]bool{"1": true} // initialize's reply may come after a parse error
	for i := 0; i < 50; i++ {
		id := strconv.Itoa(100 + i)
		if i%5 == 0 {
			b.WriteString("garbage " + id + "\n")
		}
		b.WriteString(frame(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
		want[id] = true
	}
	p.send(b.String())
	parseErrors := 0
	for len(want) > 0 {
		got := p.readFramed()
		if errCode(got) == -32700 {
			parseErrors++
			continue
		}
		id := idOf(got)
		if !want[id] {
			t.Fatalf("unexpected reply %v", got)
		}
		delete(want, id)
	}
	for parseErrors < 10 {
		if got := p.readFramed(); errCode(got) == -32700 {
			parseErrors++
		} else {
			t.Fatalf("unexpected reply %v", got)
		}
	}
}

func TestStdioExitsOnEOF(t *testing.T) {
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(initMsg + "\n")
	p.readLine()
	if !p.Stop(testutil.DefaultTimeout) {
		t.Fatal("gateway still running after stdin EOF")
	}
	if err := p.Err(); err != nil {
		t.Fatalf("exit after stdin EOF: %v", err)
	}
}

func TestUsageAndExitCodes(t *testing.T) {
	run := func(env []string, args ...string) (int, string, string) {
		cmd := exec.Command(gatewayBin, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	env := baseEnv(t)
	if code, out, _ := run(env, "--version"); code != 0 || !strings.HasPrefix(out, "mcp-gateway ") {
		t.Errorf("--version: %d %q", code, out)
	}
	if code, out, _ := run(env, "--help"); code != 0 || !strings.Contains(out, "--stdio") {
		t.Errorf("--help: %d %q", code, out)
	}
	if code, _, errOut := run(env, "--frobnicate"); code != 2 || !strings.Contains(errOut, "--frobnicate") {
		t.Errorf("unknown flag: %d %q", code, errOut)
	}
	if code, _, _ := run(env); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	bad := testutil.TempFile(t, "config.yaml", "gateway:\n  separator: \".\"\n  tool_mode: lazy\n")
	code, _, errOut := run(env, "--stdio", "--config", bad)
	if code != 2 || !strings.Contains(errOut, bad+":3") || !strings.Contains(errOut, "tool_mode") {
		t.Errorf("bad config: exit %d, stderr %q; want 2 naming %s:3 and the key", code, errOut, bad)
	}
	if code, _, errOut := run(env, "--stdio", "--config", "/nonexistent/config.yaml"); code != 2 || !strings.Contains(errOut, "/nonexistent/config.yaml") {
		t.Errorf("missing --config file: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(baseEnv(t, "DEFAULT_TIMEOUT=soon"), "--show-config"); code != 2 || !strings.Contains(errOut, "DEFAULT_TIMEOUT") {
		t.Errorf("bad env: exit %d, stderr %q", code, errOut)
	}
}

// --show-config names where each part came from, for a YAML file plus ENV
// overrides, and never shows the key.
func TestShowConfigSources(t *testing.T) {
	cfg := testutil.TempFile(t, "config.yaml", "policy: { max_citations: 5 }\nsearch: { defaults: { recency_days: 7 } }\n")
	cmd := exec.Command(gatewayBin, "--show-config", "--config", cfg, "--debug")
	cmd.Env = baseEnv(t, "OPENAI_API_KEY=sk-secret-value", "MAX_CITATIONS=2", "DEFAULT_TIMEOUT=45s")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("--show-config: %v\n%s", err, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("--show-config wrote to stdout: %q", stdout.String())
	}
	if strings.Contains(stderr.String(), "sk-secret-value") {
		t.Fatal("--show-config printed the API key")
	}
	var doc struct {
		Version string `json:"version"`
		Sources struct {
			Defaults bool     `json:"defaults"`
			YAML     *string  `json:"yaml"`
			Env      []string `json:"env"`
			CLI      []string `json:"cli"`
		} `json:"sources"`
		Effective struct {
			OpenAI map[string]any `json:"openai"`
			Policy struct {
				MaxCitations int `json:"max_citations"`
			} `json:"policy"`
			Search struct {
				Defaults struct {
					RecencyDays int `json:"recency_days"`
				} `json:"defaults"`
			} `json:"search"`
			Gateway struct {
				DefaultTimeoutMS int `json:"default_timeout_ms"`
			} `json:"gateway"`
			Server struct {
				Debug bool `json:"debug"`
			} `json:"server"`
		} `json:"effective"`
	}
	text := stderr.String()
	start := strings.Index(text, "{")
	if start < 0 || json.NewDecoder(strings.NewReader(text[start:])).Decode(&doc) != nil {
		t.Fatalf("stderr is not the show-config JSON: %q", text)
	}
	s := doc.Sources
	if !s.Defaults || s.YAML == nil || *s.YAML != cfg {
		t.Errorf("sources = %+v, want defaults and yaml %s", s, cfg)
	}
	for _, v := range []string{"MAX_CITATIONS", "DEFAULT_TIMEOUT", "OPENAI_API_KEY"} {
		if !slices.Contains(s.Env, v) {
			t.Errorf("sources.env = %v, missing %s", s.Env, v)
		}
	}
	if !slices.Contains(s.CLI, "--debug") {
		t.Errorf("sources.cli = %v, missing --debug", s.CLI)
	}
	e := doc.Effective
	if e.Policy.MaxCitations != 2 || e.Search.Defaults.RecencyDays != 7 || e.Gateway.DefaultTimeoutMS != 45000 || !e.Server.Debug {
		t.Errorf("effective = %+v: want ENV max_citations 2 over YAML 5, YAML recency 7, DEFAULT_TIMEOUT 45000, debug from CLI", e)
	}
	if e.OpenAI["api_key"] != "set" {
		t.Errorf(`effective.openai.api_key = %v, want "set"`, e.OpenAI["api_key"])
	}
}

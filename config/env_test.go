package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvVariables(t *testing.T) {
	tests := []struct {
		name, value string
		check       func(*Config) bool // nil: an error naming the variable is expected
		msg         string
	}{
		{"OPENAI_BASE_URL", "https://proxy.example.com/v1", func(c *Config) bool { return c.OpenAI.BaseURL == "https://proxy.example.com/v1" }, ""},
		{"OPENAI_BASE_URL", "proxy.example.com", nil, "http or https"},
		{"OPENAI_API_TIMEOUT", "60000", func(c *Config) bool { return c.Request.TimeoutMS == 60000 }, ""},
		{"OPENAI_API_TIMEOUT", "2m", func(c *Config) bool { return c.Request.TimeoutMS == 120000 }, ""},
		{"OPENAI_API_TIMEOUT", "0", nil, "between 1 and"},
		{"OPENAI_API_TIMEOUT", "soon", nil, "milliseconds or a duration"},
		{"OPENAI_MAX_RETRIES", "0", func(c *Config) bool { return c.Request.MaxRetries == 0 }, ""},
		{"OPENAI_MAX_RETRIES", "10", func(c *Config) bool { return c.Request.MaxRetries == 10 }, ""},
		{"OPENAI_MAX_RETRIES", "11", nil, "between 0 and 10"},
		{"OPENAI_MAX_RETRIES", "-1", nil, "between 0 and 10"},
		{"OPENAI_MAX_RETRIES", "three", nil, "must be an integer"},
		{"SEARCH_RECENCY_DAYS", "7", func(c *Config) bool { return c.Search.Defaults.RecencyDays == 7 }, ""},
		{"SEARCH_RECENCY_DAYS", "0", nil, "between 1 and"},
		{"SEARCH_RECENCY_DAYS", "7d", nil, "must be an integer"},
		{"SEARCH_MAX_RESULTS", "10", func(c *Config) bool { return c.Search.Defaults.MaxResults == 10 }, ""},
		{"SEARCH_MAX_RESULTS", "0", nil, "between 1 and"},
		{"SEARCH_MAX_RESULTS", "1.5", nil, "must be an integer"},
		{"MAX_CITATIONS", "1", func(c *Config) bool { return c.Policy.MaxCitations == 1 }, ""},
		{"MAX_CITATIONS", "10", func(c *Config) bool { return c.Policy.MaxCitations == 10 }, ""},
		{"MAX_CITATIONS", "0", nil, "between 1 and 10"},
		{"MAX_CITATIONS", "11", nil, "between 1 and 10"},
		{"MODEL_ANSWER", "gpt-5-mini", func(c *Config) bool { return c.ModelProfiles["answer"].Model == "gpt-5-mini" }, ""},
		{"ANSWER_EFFORT", "high", func(c *Config) bool { return c.ModelProfiles["answer"].ReasoningEffort == "high" }, ""},
		{"ANSWER_EFFORT", "xhigh", func(c *Config) bool { return c.ModelProfiles["answer"].ReasoningEffort == "xhigh" }, ""},
		{"ANSWER_EFFORT", "extreme", nil, "must be none, minimal, low, medium, high or xhigh"},
		{"ANSWER_VERBOSITY", "low", func(c *Config) bool { return c.ModelProfiles["answer"].Verbosity == "low" }, ""},
		{"ANSWER_VERBOSITY", "loud", nil, "must be low, medium or high"},
		{"DEFAULT_TIMEOUT", "45s", func(c *Config) bool { return c.Gateway.DefaultTimeoutMS == 45000 }, ""},
		{"DEFAULT_TIMEOUT", "2500", func(c *Config) bool { return c.Gateway.DefaultTimeoutMS == 2500 }, ""},
		{"DEFAULT_TIMEOUT", "1m30s", func(c *Config) bool { return c.Gateway.DefaultTimeoutMS == 90000 }, ""},
		{"DEFAULT_TIMEOUT", "-5s", nil, "between 1 and"},
		{"DEFAULT_TIMEOUT", "100us", nil, "at least 1ms"},
		{"DEFAULT_TIMEOUT", "10000h", nil, "between 1 and"},
		{"DEFAULT_TIMEOUT", "45 seconds", nil, "milliseconds or a duration"},
		{"MCP_LINE_MODE", "1", func(c *Config) bool { return c.Gateway.LineMode }, ""},
		{"MCP_LINE_MODE", "0", func(c *Config) bool { return !c.Gateway.LineMode }, ""},
		{"MCP_LINE_MODE", "yes", nil, "must be 1 or 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			env := map[string]string{tt.name: tt.value}
			c, s, _, err := loadText(t, "", env, Flags{})
			if tt.check != nil {
				if err != nil {
					t.Fatal(err)
				}
				if !tt.check(c) {
					t.Errorf("not applied: %+v", c)
				}
				if len(s.Env) != 1 || s.Env[0] != tt.name {
					t.Errorf("sources.env = %q", s.Env)
				}
				return
			}
			if err == nil {
				t.Fatal("Load succeeded; want an error")
			}
			checkOnlyErrors(t, err)
			e := findErr(t, Errors(err), tt.name)
			if e.File != "" || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error = %q; want %q", e.Error(), tt.msg)
			}
			if want := "environment variable " + tt.name + ": "; !strings.HasPrefix(e.Error(), want) {
				t.Errorf("error = %q; want it to start %q", e.Error(), want)
			}
		})
	}
}

func TestEnvOverridesBadYAMLValue(t *testing.T) {
	// ENV > YAML: the effective value is validated, so a bad file value
	// that the environment replaces is no error.
	c, _ := mustLoad(t, "policy: {max_citations: 42}\n", map[string]string{"MAX_CITATIONS": "4"}, Flags{})
	if c.Policy.MaxCitations != 4 {
		t.Errorf("max_citations = %d", c.Policy.MaxCitations)
	}
}

func TestDebugEnv(t *testing.T) {
	tests := []struct {
		yaml, value string
		debug       bool
		file        string
	}{
		{"", "1", true, ""},
		{"", "true", true, ""},
		{"", "TRUE", true, ""},
		{"", "0", false, ""},
		{"", "false", false, ""},
		{"", "False", false, ""},
		{"", "", false, ""},
		{"", "/tmp/gw-debug.log", true, "/tmp/gw-debug.log"},
		{"", "~/gw.log", true, filepath.FromSlash("/home/me/gw.log")},
		{"", "debug.log", true, "debug.log"},
		// The original turned debug on for DEBUG=false; here it is off,
		// even over the file.
		{"server: {debug: true}", "false", false, ""},
		{"server: {debug: true}", "0", false, ""},
		{"server: {debug: true}", "", false, ""}, // docs/configuration.md: empty is off
		{"server: {debug: true, debug_file: /y.log}", "1", true, "/y.log"},
		{"server: {debug: true, debug_file: /y.log}", "/e.log", true, "/e.log"},
	}
	for _, tt := range tests {
		t.Run(tt.yaml+"/DEBUG="+tt.value, func(t *testing.T) {
			c, s := mustLoad(t, tt.yaml, map[string]string{"DEBUG": tt.value}, Flags{})
			if c.Server.Debug != tt.debug || c.Server.DebugFile != tt.file {
				t.Errorf("debug = %v, file %q; want %v, %q", c.Server.Debug, c.Server.DebugFile, tt.debug, tt.file)
			}
			if applied := len(s.Env) == 1 && s.Env[0] == "DEBUG"; !applied {
				t.Errorf("sources.env = %q", s.Env)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		flags Flags
		debug bool
		file  string
		cli   string
	}{
		{Flags{}, false, "", ""},
		{Flags{Debug: true}, true, "", "--debug"},
		{Flags{DebugFile: "~/d.log"}, true, filepath.FromSlash("/home/me/d.log"), "--debug"},
		{Flags{Debug: true, DebugFile: "/d.log"}, true, "/d.log", "--debug"},
	}
	for _, tt := range tests {
		c, s := mustLoad(t, "", nil, tt.flags)
		if c.Server.Debug != tt.debug || c.Server.DebugFile != tt.file || strings.Join(s.CLI, ",") != tt.cli {
			t.Errorf("%+v: debug %v file %q cli %q", tt.flags, c.Server.Debug, c.Server.DebugFile, s.CLI)
		}
	}
	_, _, _, err := loadText(t, "", nil, Flags{Listen: "localhost"})
	if e := findErr(t, Errors(err), "--listen"); !strings.HasPrefix(e.Error(), "flag --listen: must be host:port") {
		t.Errorf("error = %q", e.Error())
	}
}

func TestAPIKey(t *testing.T) {
	const secret = "sk-proj-VERYSECRET"
	c, s := mustLoad(t, "", map[string]string{"OPENAI_API_KEY": " " + secret + "\n"}, Flags{})
	if c.APIKey != secret || len(s.Env) != 1 || s.Env[0] != "OPENAI_API_KEY" {
		t.Errorf("APIKey %q, sources.env %q", c.APIKey, s.Env)
	}
	c, s = mustLoad(t, "openai: {api_key_env: MY_KEY}", map[string]string{"OPENAI_API_KEY": "other", "MY_KEY": secret}, Flags{})
	if c.APIKey != secret || len(s.Env) != 1 || s.Env[0] != "MY_KEY" {
		t.Errorf("APIKey %q, sources.env %q", c.APIKey, s.Env)
	}
	c, s = mustLoad(t, "", map[string]string{"OPENAI_API_KEY": ""}, Flags{})
	if c.APIKey != "" || len(s.Env) != 0 {
		t.Errorf("APIKey %q, sources.env %q", c.APIKey, s.Env)
	}
	errs := mustFail(t, "openai: {api_key_env: \"\"}", nil)
	findErr(t, errs, "openai.api_key_env")
}

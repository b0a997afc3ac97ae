package config

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestShowConfigShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		key  string
	}{
		{"key set", map[string]string{"OPENAI_API_KEY": "sk-live-DO-NOT-PRINT"}, "set"},
		{"key unset", nil, "unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s, err := Load(LoadOptions{Home: t.TempDir(), Env: mapEnv(tc.env), Flags: Flags{Debug: true}})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteShowConfig(&buf, "1.2.3", c, s); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(out, "sk-live-DO-NOT-PRINT") {
				t.Fatal("show-config prints the API key")
			}
			if !strings.HasPrefix(out, "{\n  \"version\": \"1.2.3\",\n  \"sources\": {\n    \"defaults\": true,\n    \"yaml\": null,") {
				t.Errorf("not two-space indented or wrong order:\n%s", out)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(doc)); !slices.Equal(keys, []string{"effective", "sources", "version"}) {
				t.Errorf("top-level keys = %q", keys)
			}
			var src struct {
				Defaults bool     `json:"defaults"`
				YAML     *string  `json:"yaml"`
				Env      []string `json:"env"`
				CLI      []string `json:"cli"`
			}
			if err := json.Unmarshal(doc["sources"], &src); err != nil {
				t.Fatal(err)
			}
			if !src.Defaults || src.YAML != nil || src.Env == nil || !slices.Equal(src.CLI, []string{"--debug"}) {
				t.Errorf("sources = %s", doc["sources"])
			}
			var eff struct {
				OpenAI map[string]any `json:"openai"`
				Server ServerOptions  `json:"server"`
			}
			if err := json.Unmarshal(doc["effective"], &eff); err != nil {
				t.Fatal(err)
			}
			if eff.OpenAI["api_key"] != tc.key || eff.OpenAI["api_key_env"] != "OPENAI_API_KEY" || !eff.Server.Debug {
				t.Errorf("effective = %s", doc["effective"])
			}
			if tc.key == "set" && !slices.Contains(src.Env, "OPENAI_API_KEY") {
				t.Errorf("sources.env = %q", src.Env)
			}
		})
	}
}

// jsonString is s as a JSON string (Windows paths' backslashes doubled).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestShowConfigYAMLPathAndMasking(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-key-value-1",
		"MY_TOKEN":       "tok-value-2",
		"REMOTE_TOKEN":   "tok-value-3",
		"ARG_SECRET":     "tok-value-4",
		"HOST":           "mcp.example.com",
	}
	c, s, p, err := loadText(t, `servers:
  - name: fs
    command: npx
    args: [-y, server, "--secret=${ARG_SECRET}"]
    env: {LOG_LEVEL: warn, TOKEN: "${MY_TOKEN}", GITHUB_TOKEN: ghp-literal-value-5, FROM_VAR: "${HOST}"}
  - name: remote
    url: "https://user:pw-value-6@${HOST}/mcp?api_key=qv-value-7&x=1"
    headers: {Authorization: "Bearer ${REMOTE_TOKEN}", X-Trace: on}
  - name: plainurl
    url: "https://u:pw-value-8@h.example.com/mcp?token=qv-value-9"
`, env, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteShowConfig(&buf, "dev", c, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"sk-key-value-1", "tok-value-2", "tok-value-3", "tok-value-4", "ghp-literal-value-5", "pw-value-6", "qv-value-7", "pw-value-8", "qv-value-9"} {
		if strings.Contains(out, secret) {
			t.Errorf("show-config prints %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		`"yaml": ` + jsonString(p),
		`"LOG_LEVEL": "warn"`,
		`"TOKEN": "***"`,
		`"GITHUB_TOKEN": "***"`,
		`"FROM_VAR": "***"`,
		`"--secret=${ARG_SECRET}"`,
		`"Authorization": "***"`,
		`"X-Trace": "on"`,
		`"url": "https://user:***@${HOST}/mcp?api_key=***&x=1"`,
		`"url": "https://u:***@h.example.com/mcp?token=***"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show-config lacks %s:\n%s", want, out)
		}
	}
	// The loaded config itself keeps the real values.
	if c.Servers[0].Env["TOKEN"] != "tok-value-2" || c.Servers[1].Headers["Authorization"] != "Bearer tok-value-3" {
		t.Errorf("masking changed the config: %+v", c.Servers)
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com/mcp"},
		{"https://u:p@h/x?a=1&token=t#frag", "https://u:***@h/x?a=1&token=***#frag"},
		{"https://u@h/x", "https://***@h/x"},
		{"https://${TOKEN}@h/x", "https://***@h/x"},
		{"https://h/x?apikey=", "https://h/x?apikey=***"},
		{"not a url", "not a url"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShowConfigNilSources(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteShowConfig(&buf, "dev", &Config{}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "null,\n    \"cli\"") || !strings.Contains(buf.String(), `"env": []`) {
		t.Errorf("output:\n%s", buf.String())
	}
}

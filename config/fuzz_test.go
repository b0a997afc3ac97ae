package config

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load as a configuration file. Load must
// not panic, must return *Error values (alone or joined) on failure, and a
// loaded configuration must print with WriteShowConfig without the API key.
// The input is passed as LoadOptions.Data, so the fuzzer writes no files.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"full.yaml", "claude_desktop_config.json", "vscode_mcp.json", "seed_gateway.yaml", "bad.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(""))
	f.Add([]byte("x: &a [1]\ny: *a\n"))
	f.Add([]byte("mcpServers: {a: {command: \"${X:-y}\", args: [\"$${Z}\"]}}"))
	env := mapEnv(map[string]string{"OPENAI_API_KEY": "sk-fuzz-secret", "X": "1", "DEBUG": "/tmp/d.log"})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, s, err := Load(LoadOptions{Path: "config.yaml", Data: data, Home: "/home/fuzz", Env: env})
		if err != nil {
			checkOnlyErrors(t, err)
			if c != nil || s != nil {
				t.Fatal("Load returned a config with an error")
			}
			return
		}
		if c == nil || s == nil {
			t.Fatal("Load returned nil without an error")
		}
		var buf bytes.Buffer
		if err := WriteShowConfig(&buf, "fuzz", c, s); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(buf.Bytes(), []byte("sk-fuzz-secret")) {
			t.Fatal("show-config printed the API key")
		}
	})
}

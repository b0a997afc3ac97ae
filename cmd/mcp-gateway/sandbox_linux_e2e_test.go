//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// TestSandboxThroughTheBinary: the binary re-executes itself in its
// sandbox mode for a confined server: status shows the confinement as
// applied (text and --json) and what is not enforced, and the server's
// read of the gateway's own config fails with the OS's error.
func TestSandboxThroughTheBinary(t *testing.T) {
	t.Parallel()
	if backends.LandlockABI() == 0 {
		t.Skip("the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs): nothing to confine with")
	}
	env := baseEnv(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	cfg := filepath.Join(home, ".config", "mcp-gateway", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`
gateway: {answer_tools: false}
servers:
  - {name: h, command: %[1]q, args: [-hostile], sandbox: {mode: enforce, network: none}}
  - {name: capped, command: %[1]q, sandbox: {mode: best_effort, memory_mb: 512}}
  - {name: strict, command: %[1]q, sandbox: {mode: enforce, processes: 64}}
`, backendBin)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, _ := runCLIEnv(t, env, "status", "--config", cfg)
	for _, want := range []string{
		"h  sandbox: fs ✓ net none mem — procs — (enforce)",
		"capped  sandbox: fs ✓ net all mem — procs — (best_effort)",
		"not enforced: memory_mb 512: per-server cgroup v2 limits are not yet done",
		"strict  sandbox (enforce): not started: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s\nstderr:\n%s", want, out, errOut)
		}
	}

	out, _, _ = runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var doc struct {
		Servers []struct {
			Name    string `json:"name"`
			Sandbox *struct {
				Mode            string `json:"mode"`
				FS              bool   `json:"fs"`
				Network         string `json:"network"`
				NetworkEnforced bool   `json:"network_enforced"`
			} `json:"sandbox"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Servers) != 3 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if sb := doc.Servers[0].Sandbox; sb == nil || sb.Mode != "enforce" || !sb.FS || sb.Network != "none" || !sb.NetworkEnforced {
		t.Errorf("status --json: h's sandbox %+v", sb)
	}

	out, errOut, _ = runCLIEnv(t, env, "call", "h.read_file", fmt.Sprintf(`{"path":%q}`, cfg), "--config", cfg)
	if !strings.Contains(out, "permission denied") || strings.Contains(out, "answer_tools") {
		t.Errorf("the confined server read the gateway's config:\n%s\nstderr:\n%s", out, errOut)
	}
}

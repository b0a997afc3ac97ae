package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hungCommand is when runCLIEnv gives a command up as hung: not a bound on
// its speed (--show-config of 20,000 servers under -race takes a minute
// with both cores busy).
const hungCommand = 5 * time.Minute

// runCLIEnv runs the binary to completion with env and returns stdout,
// stderr and the exit code.
func runCLIEnv(t testing.TB, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(gatewayBin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(hungCommand):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish within %s\nstderr:\n%s", args, hungCommand, stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// writeJSONFile writes v as JSON to dir/name and returns the path.
func writeJSONFile(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// countedBackend is a testbackend entry that records each start in dir.
func countedBackend(dir string) map[string]any {
	return map[string]any{"command": backendBin, "args": []string{"-pid-dir", dir}}
}

// starts counts the backend starts recorded in dir.
func starts(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// statusOf runs `status --json` and returns each server's state; errs gets
// each server's error, when not nil.
func statusOf(t *testing.T, env []string, args ...string) map[string]string {
	return statusErrs(t, env, nil, args...)
}

func statusErrs(t *testing.T, env []string, errs map[string]string, args ...string) map[string]string {
	t.Helper()
	out, errOut, code := runCLIEnv(t, env, append([]string{"status", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errOut)
	}
	var st struct {
		Servers []struct{ Name, State, Error string }
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	states := map[string]string{}
	for _, s := range st.Servers {
		states[s.Name] = s.State
		if errs != nil {
			errs[s.Name] = s.Error
		}
	}
	return states
}

// A Claude Desktop file with the gateway's own entry, used as the
// gateway's --config (the README recipe taken literally): the gateway
// entry is skipped, the real backend starts once.
func TestRecursionSameExecutable(t *testing.T) {
	t.Parallel()
	dir, pids := t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(dir, "claude_desktop_config.json")
	// A symlink to the binary is the same executable (named as Windows
	// runs programs: with the binary's .exe).
	link := filepath.Join(dir, "mcp-gateway-link"+filepath.Ext(gatewayBin))
	if err := os.Symlink(gatewayBin, link); err != nil {
		t.Skipf("symlink: %v", err) // Windows without the privilege to make one
	}
	if _, err := os.Stat(link); err != nil {
		missing(t, fmt.Sprintf("the symbolic link made does not resolve (Wine 8.0 writes the Windows path into a Unix link): %v", err))
	}
	writeJSONFile(t, dir, "claude_desktop_config.json", map[string]any{
		"mcpServers": map[string]any{
			"gateway": map[string]any{"command": gatewayBin, "args": []string{"--stdio", "--config", cfgPath}},
			"linked":  map[string]any{"command": link, "args": []string{"--stdio", "--config=" + filepath.Join(dir, ".", "claude_desktop_config.json")}},
			"tb":      countedBackend(pids),
		},
	})
	env := baseEnv(t)
	errs := map[string]string{}
	states := statusErrs(t, env, errs, "--config", cfgPath)
	if states["gateway"] != "skipped" || states["linked"] != "skipped" || states["tb"] != "ready" {
		t.Errorf("states = %v, want gateway and linked skipped, tb ready", states)
	}
	// Skipped before starting, not by the chain in a started child.
	for _, name := range []string{"gateway", "linked"} {
		if !strings.HasPrefix(errs[name], "runs this mcp-gateway again on "+cfgPath) {
			t.Errorf("%s: reason %q", name, errs[name])
		}
	}
	if n := starts(t, pids); n != 1 {
		t.Errorf("testbackend started %d times, want 1", n)
	}

	out, errOut, code := runCLIEnv(t, env, "tools", "--config", cfgPath)
	if code != 0 || !strings.Contains(out, "tb.echo") || !strings.Contains(out, "skipped: gateway, linked") {
		t.Errorf("tools: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "would run this gateway again") {
		t.Errorf("no warning on stderr:\n%s", errOut)
	}
}

// With no --config the gateway reads the default path; an entry there
// without --config is the same gateway.
func TestRecursionDefaultConfig(t *testing.T) {
	t.Parallel()
	home, pids := t.TempDir(), t.TempDir()
	writeJSONFile(t, home, filepath.Join(".config", "mcp-gateway", "config.yaml"), map[string]any{
		"gateway": map[string]any{"answer_tools": false},
		"servers": []any{
			map[string]any{"name": "me", "command": gatewayBin, "args": []string{"--stdio"}},
			map[string]any{"name": "tb", "command": backendBin, "args": []string{"-pid-dir", pids}},
		},
	})
	env := append(baseEnv(t), "HOME="+home, "USERPROFILE="+home) // the last one wins
	errs := map[string]string{}
	states := statusErrs(t, env, errs)
	if states["me"] != "skipped" || states["tb"] != "ready" || !strings.HasPrefix(errs["me"], "runs this mcp-gateway again") {
		t.Errorf("states = %v, errors = %v", states, errs)
	}
	if n := starts(t, pids); n != 1 {
		t.Errorf("testbackend started %d times, want 1", n)
	}
}

// A gateway reached through a wrapper that the gateway cannot see through
// (a shell script, a copy of the binary) finds itself in the chain, starts
// nothing, and is reported as skipped.
func TestRecursionThroughWrapper(t *testing.T) {
	t.Parallel()
	dir, pids := t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(dir, "claude_desktop_config.json")
	copyBin := filepath.Join(dir, "gateway-copy"+exeSuffix())
	copyFile(t, gatewayBin, copyBin)
	servers := map[string]any{
		"copy": map[string]any{"command": copyBin, "args": []string{"--stdio", "--config", cfgPath}},
		"tb":   countedBackend(pids),
	}
	counter := filepath.Join(dir, "wrapper-runs")
	if runtime.GOOS != "windows" {
		script := filepath.Join(dir, "wrap.sh")
		body := fmt.Sprintf("#!/bin/sh\necho run >> %q\nexec %q \"$@\"\n", counter, gatewayBin)
		if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		servers["script"] = map[string]any{"command": script, "args": []string{"--stdio", "--config", cfgPath}}
	}
	writeJSONFile(t, dir, "claude_desktop_config.json", map[string]any{"mcpServers": servers})
	states := statusOf(t, baseEnv(t), "--config", cfgPath)
	want := map[string]string{"copy": "skipped", "tb": "ready"}
	if runtime.GOOS != "windows" {
		want["script"] = "skipped"
	}
	for name, st := range want {
		if states[name] != st {
			t.Errorf("%s is %q, want %q (all: %v)", name, states[name], st, states)
		}
	}
	if n := starts(t, pids); n != 1 {
		t.Errorf("testbackend started %d times, want 1 (the nested gateways must start nothing)", n)
	}
	if runtime.GOOS != "windows" {
		if b, err := os.ReadFile(counter); err != nil || strings.Count(string(b), "run") != 1 {
			t.Errorf("wrapper ran %q times (%v), want once: the chain ends at depth 2", b, err)
		}
	}
}

// A deliberate nested gateway on another configuration works, and its
// tools are listed; it sees the outer gateway in its chain and so skips an
// entry leading back to the outer configuration.
func TestNestedGatewayOtherConfig(t *testing.T) {
	t.Parallel()
	dir, pids := t.TempDir(), t.TempDir()
	outer := filepath.Join(dir, "outer.json")
	inner := writeJSONFile(t, dir, "inner.json", map[string]any{
		"gateway": map[string]any{"answer_tools": false},
		"mcpServers": map[string]any{
			"back": map[string]any{"command": gatewayBin, "args": []string{"--stdio", "--config", outer}},
			"tb":   countedBackend(pids),
		},
	})
	writeJSONFile(t, dir, "outer.json", map[string]any{
		"gateway":    map[string]any{"answer_tools": false},
		"mcpServers": map[string]any{"nested": map[string]any{"command": gatewayBin, "args": []string{"--stdio", "--config", inner}}},
	})
	env := baseEnv(t)
	out, errOut, code := runCLIEnv(t, env, "tools", "--config", outer)
	if code != 0 || !strings.Contains(out, "nested.tb.echo") {
		t.Fatalf("tools: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := starts(t, pids); n != 1 {
		t.Errorf("testbackend started %d times, want 1", n)
	}
	// The inner gateway skipped its entry back to the outer config: run the
	// inner one under the outer one's chain and look at its status.
	chain, _ := json.Marshal([]string{outer})
	states := statusOf(t, append(env, "MCP_GATEWAY_CHAIN="+string(chain)), "--config", inner)
	if states["back"] != "skipped" || states["tb"] != "ready" {
		t.Errorf("inner states = %v", states)
	}
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

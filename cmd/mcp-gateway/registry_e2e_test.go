package main

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestAddEndToEnd: `mcp-gateway add` of the fixture registry's
// server-everything entry (the npm package the tests install, at its
// locked version, which npx runs from node_modules without a download),
// with its secret input EVERYTHING_TOKEN given by --env, while a gateway
// runs on the file (--debug): the running gateway picks the entry up by
// its live reload, withholds its tools (trust: approve) until `mcp-gateway
// approve`, then lists them, and a call works. The server got the secret
// (get-env returns its environment: the value's SHA-256 matches), the
// file holds only the reference, and the value is in no file under HOME
// (configuration, cache with the registry's answers, state with the
// snapshots, the secret store's files) or the configuration's directory,
// in no line the gateway logged, and not in what add, --show-config and
// status --json print.
func TestAddEndToEnd(t *testing.T) {
	npmPeers(t)
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	env := baseEnv(t, "MCP_GATEWAY_SECRETS=file")
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(gatewayBin, args...)
		cmd.Env = env
		return cmd
	}
	const secret = "evt-7c1d-0a9f-secret-4e2b"
	cfg := filepath.Join(dir, "config.yaml")
	start := "# my gateway\ngateway:\n  registry: {url: " + reg.URL + "}\n  answer_tools: false\n"
	if err := os.WriteFile(cfg, []byte(start), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startGateway(t, env, "--stdio", "--config", cfg, "--debug")
	s, _ := initSession(t, gw, "add-e2e", "{}")
	if names := s.toolsList(); len(names) != 0 {
		t.Fatalf("tools before add: %v", names)
	}

	out, err := run("add", "io.github.modelcontextprotocol/everything", "--env", "EVERYTHING_TOKEN="+secret, "--yes", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	for _, want := range []string{"runs: npx -y @modelcontextprotocol/server-everything@2026.8.31", "env EVERYTHING_TOKEN=${secret:everything.EVERYTHING_TOKEN} (a secret", "trust: approve", `added everything to ` + cfg, "Note: its first start downloads the package (npx): a running gateway starts it now, and mcp-gateway status shows"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("add did not say %q:\n%s", want, out)
		}
	}
	data := string(must(os.ReadFile(cfg)))
	if !strings.HasPrefix(data, start) || !strings.Contains(data, "from: registry io.github.modelcontextprotocol/everything@2026.8.31") ||
		!strings.Contains(data, "EVERYTHING_TOKEN: ${secret:everything.EVERYTHING_TOKEN}") {
		t.Fatalf("the configuration after add:\n%s", data)
	}

	// The running gateway reloads the file and starts the server; its
	// tools are withheld until approved (trust: approve).
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		code, _, data := s.callTool("everything.echo", `{"message":"x"}`).Error(t)
		return code == -32003 && data["withheld"] != nil
	}) {
		t.Fatal("the running gateway never withheld the added server's echo")
	}
	if names := s.toolsList(); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything.") }) {
		t.Fatalf("tools listed before approval: %v", names)
	}
	if out, err := run("approve", "everything", "--all", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return slices.Contains(s.toolsList(), "everything.echo") }) {
		t.Fatalf("the running gateway does not list everything.echo after approval: %v", s.toolsList())
	}
	r := s.callTool("everything.echo", `{"message":"added from the registry"}`)
	if !strings.Contains(r.String(), "added from the registry") {
		t.Fatalf("everything.echo: %s", r)
	}

	// The server's environment has the secret's value (compared by hash:
	// the test prints neither).
	var environ map[string]string
	r = s.callTool("everything.get-env", `{}`)
	res, _ := r.Map()["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("everything.get-env: no content")
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &environ); err != nil {
		t.Fatalf("everything.get-env: %v", err)
	}
	if got, want := sha256.Sum256([]byte(environ["EVERYTHING_TOKEN"])), sha256.Sum256([]byte(secret)); got != want {
		t.Fatalf("the server's EVERYTHING_TOKEN has SHA-256 %x, the secret %x", got, want)
	}

	show, _ := run("--show-config", "--config", cfg).CombinedOutput()
	if !strings.Contains(string(show), "${secret:everything.EVERYTHING_TOKEN}") {
		t.Errorf("--show-config does not show the reference:\n%s", show)
	}
	status, _ := run("status", "--json", "--config", cfg).CombinedOutput()
	if !strings.Contains(string(status), `"from": "registry io.github.modelcontextprotocol/everything@2026.8.31"`) {
		t.Errorf("status --json does not show the server's provenance:\n%s", status)
	}
	gw.Stop(testutil.DefaultTimeout)

	texts := map[string]string{"add's output": string(out), "gateway stderr": gw.Stderr.String(), "--show-config": string(show), "status --json": string(status)}
	var snapshots, cached bool
	for p, data := range filesUnder(t, home, dir) {
		texts[p] = data
		snapshots = snapshots || strings.HasPrefix(p, config.SnapshotDir(home, runtime.GOOS, lookupIn(env)))
		cached = cached || strings.HasPrefix(p, config.RegistryCacheDir(home, runtime.GOOS, lookupIn(env)))
	}
	if !snapshots || !cached {
		t.Fatalf("no snapshot (%v) or no registry cache (%v) among the files walked: %v", snapshots, cached, slices.Sorted(maps.Keys(texts)))
	}
	if !strings.Contains(gw.Stderr.String(), " DBG ") {
		t.Errorf("the gateway's stderr has no debug line:\n%s", gw.Stderr)
	}
	for what, text := range texts {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret", what)
		}
	}
}

// lookupIn is a lookup function over env's NAME=VALUE list.
func lookupIn(env []string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}

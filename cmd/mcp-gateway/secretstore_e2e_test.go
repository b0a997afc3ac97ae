package main

// End-to-end tests of the secret store (docs/secrets.md) through the binary.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// secretCLI runs `mcp-gateway secret ARGS...` with stdin.
func secretCLI(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(gatewayBin, append([]string{"secret"}, args...)...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// mustSetSecret sets a secret through the command, the value on stdin.
func mustSetSecret(t *testing.T, env []string, name, value string) {
	t.Helper()
	if _, errOut, code := secretCLI(t, env, value+"\n", "set", name); code != 0 {
		t.Fatalf("secret set %s: exit %d\n%s", name, code, errOut)
	}
}

// TestSecretsEndToEnd: a server whose env refers to ${secret:NAME} gets
// the value set with `mcp-gateway secret set` (a hash of it comes back from
// the server), which no file under the configuration, cache and state
// directories and no line of the gateway's log holds; --show-config and
// status show the reference; a server whose secret is not set fails with
// the command that sets it while the others run; and setting a secret
// while the gateway runs restarts the servers that use it and no other.
func TestSecretsEndToEnd(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, "MCP_GATEWAY_SECRETS=file", "DEBUG=1")
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	values := map[string]string{
		"a.TOKEN":  "sek-A-first-5f1e",
		"a.TOKEN2": "sek-A-second-77c0",
		"b.TOKEN":  "sek-B-9d2a",
	}

	// The command: set, ls, get; the value never from the command line.
	if _, errOut, code := secretCLI(t, env, "", "set", "a.TOKEN", values["a.TOKEN"]); code != exitUsage || !strings.Contains(errOut, "never from the command line") {
		t.Errorf("secret set NAME VALUE: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := secretCLI(t, env, "", "set", "bad/name"); code != exitUsage || !strings.Contains(errOut, "is not a secret's name") {
		t.Errorf("secret set bad/name: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := secretCLI(t, env, "", "set", "a.TOKEN"); code != exitFailure || !strings.Contains(errOut, "no value on stdin") {
		t.Errorf("secret set with nothing on stdin: exit %d\n%s", code, errOut)
	}
	mustSetSecret(t, env, "a.TOKEN", values["a.TOKEN"])
	if out, _, code := secretCLI(t, env, "", "ls"); code != 0 || out != "# store: file (chosen)\na.TOKEN\n" {
		t.Errorf("secret ls: exit %d\n%s", code, out)
	}
	if out, _, code := secretCLI(t, env, "", "get", "a.TOKEN"); code != 0 || out != values["a.TOKEN"]+"\n" {
		t.Errorf("secret get: exit %d %q", code, out)
	}
	if _, errOut, code := secretCLI(t, env, "", "get", "nope"); code != exitFailure || !strings.Contains(errOut, "mcp-gateway secret set nope") {
		t.Errorf("secret get of a secret not set: exit %d\n%s", code, errOut)
	}

	// The configuration in the default place, beside the store.
	pids := t.TempDir()
	a, b, plain := tb("a", "-env-digest"), tb("b", "-env-digest"), tb("plain", "-env-digest")
	a.Env = map[string]string{"TOKEN": "${secret:a.TOKEN}"}
	b.Env = map[string]string{"TOKEN": "${secret:b.TOKEN}"}
	b.Restart = "never"
	cfg := filepath.Join(home, ".config", "mcp-gateway", "config.yaml")
	if err := os.WriteFile(cfg, reloadConfig(t, pids, "", a, b, plain), 0o600); err != nil {
		t.Fatal(err)
	}

	_, show, code := runCLIEnv(t, env, "--show-config", "--config", cfg)
	if code != 0 || !strings.Contains(show, `"TOKEN": "${secret:a.TOKEN}"`) {
		t.Errorf("--show-config does not show the reference: exit %d\n%s", code, show)
	}
	js, statusErr, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var st struct {
		Servers []struct{ Name, State, Error string }
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil || len(st.Servers) != 3 {
		t.Fatalf("status --json: %v\n%s\n%s", err, js, statusErr)
	}
	for _, s := range st.Servers {
		switch {
		case s.Name == "b" && (s.State != "failed" || !strings.Contains(s.Error, "secret b.TOKEN is not set") || !strings.Contains(s.Error, "mcp-gateway secret set b.TOKEN")):
			t.Errorf("b: %s %q; want failed, naming the secret and the command that sets it", s.State, s.Error)
		case s.Name != "b" && s.State != "ready":
			t.Errorf("%s: %s %q", s.Name, s.State, s.Error)
		}
	}

	gw, _ := initSession(t, startGateway(t, env, "--stdio", "--config", cfg), "e2e", "{}")
	digest := func(server string) string {
		t.Helper()
		r := gw.callTool(server+".env_digest", `{"name":"TOKEN"}`).Map()
		res, _ := r["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) != 1 || res["isError"] == true {
			return fmt.Sprint(r)
		}
		return fmt.Sprint(content[0].(map[string]any)["text"])
	}
	sha := func(v string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(v))) }
	if got := digest("a"); got != sha(values["a.TOKEN"]) {
		t.Errorf("a's TOKEN: %s, want %s", got, sha(values["a.TOKEN"]))
	}

	// plain has started (its pid file written) before the count.
	if got := digest("plain"); got != "unset" {
		t.Errorf("plain's TOKEN: %s, want unset", got)
	}
	before := map[string]int{}
	for _, name := range []string{"a", "b", "plain"} {
		before[name] = starts(t, filepath.Join(pids, name))
	}
	// b's secret set while the gateway runs: b starts, no other restarts.
	mustSetSecret(t, env, "b.TOKEN", values["b.TOKEN"])
	testutil.WaitFor(t, testutil.DefaultTimeout, "b started with its secret", func() bool { return digest("b") == sha(values["b.TOKEN"]) })
	// a's changed: a restarts with the new value.
	mustSetSecret(t, env, "a.TOKEN", values["a.TOKEN2"])
	testutil.WaitFor(t, testutil.DefaultTimeout, "a restarted with its new secret", func() bool { return digest("a") == sha(values["a.TOKEN2"]) })
	waitStderr(t, gw, "restarted=[a]")
	for name, want := range map[string]int{"a": 1, "b": 1, "plain": 0} {
		if n := starts(t, filepath.Join(pids, name)) - before[name]; n != want {
			t.Errorf("%s started %d times after the secrets changed, want %d", name, n, want)
		}
	}
	if !strings.Contains(gw.Stderr.String(), `trigger="secret changed"`) {
		t.Errorf("no reload for the secret's change in the log:\n%s", gw.Stderr)
	}
	gw.Stop(testutil.DefaultTimeout)

	// No value anywhere but the store's sealed file: not in a log line,
	// not in any file under HOME (configuration, cache and state
	// directories), nor in what --show-config and status print.
	texts := map[string]string{"gateway stderr": gw.Stderr.String(), "--show-config": show, "status --json": js + statusErr}
	maps.Copy(texts, filesUnder(t, home))
	if len(texts) < 6 {
		t.Fatalf("found only %d files under %s", len(texts)-3, home)
	}
	for what, text := range texts {
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the secret %q", what, v)
			}
		}
	}
}

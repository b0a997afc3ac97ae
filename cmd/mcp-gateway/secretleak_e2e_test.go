package main

// A hostile review of the secrets (docs/secrets.md), through the binary: a
// server that echoes its own secrets everywhere it can.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestSecretsEchoedByServer: a server that echoes the values of its
// secrets on its stdout (a line that is not JSON-RPC), in its
// notifications/message, on stderr as JSON (escaped) and split across
// lines (a PEM-like value of two lines), has none of them in the
// gateway's log at --debug, nor in status's errors: each is masked.
func TestSecretsEchoedByServer(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, "MCP_GATEWAY_SECRETS=file")
	values := map[string]string{
		"a.TOKEN": `sek/"A"-5f1e`,
		"a.PEM":   "pem-line-one-0a1b\npem-line-two-2c3d",
	}
	for name, v := range values {
		mustSetSecret(t, env, name, v)
	}
	a := tb("a")
	a.Env = map[string]string{
		"TOKEN":                   "${secret:a.TOKEN}",
		"TESTBACKEND_STDOUT_TEXT": "stdout says ${secret:a.TOKEN}",
		"TESTBACKEND_LOG_TEXT":    "log says ${secret:a.TOKEN}",
		"TESTBACKEND_STDERR_JSON": "json says ${secret:a.TOKEN}",
		"TESTBACKEND_STDERR_TEXT": "text says ${secret:a.PEM}",
	}
	cfg := beConfig(t, a)

	gw, _ := initSession(t, startGateway(t, env, "--stdio", "--debug", "--config", cfg), "e2e", "{}")
	if r := gw.callTool("a.log", `{}`).Map(); r["error"] != nil {
		t.Fatalf("a.log: %v", r)
	}
	for _, text := range []string{"log says", "stdout says", `json says`, "text says"} {
		waitStderr(t, gw, text)
	}
	gw.Stop(testutil.DefaultTimeout)

	forms := []string{`sek/"A"-5f1e`, `sek/\"A\"-5f1e`, "pem-line-one-0a1b", "pem-line-two-2c3d"}
	for _, f := range forms {
		if strings.Contains(gw.Stderr.String(), f) {
			t.Errorf("the log holds %q", f)
		}
	}
	js, _, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var st struct{ Servers []json.RawMessage }
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatal(err)
	}
	for _, f := range forms {
		if strings.Contains(js, f) || strings.Contains(js, strings.ReplaceAll(f, `"`, `\"`)) {
			t.Errorf("status --json holds %q", f)
		}
	}
	if t.Failed() {
		t.Logf("gateway stderr:\n%s", gw.Stderr)
	}
}

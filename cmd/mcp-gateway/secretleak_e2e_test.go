package main

// A hostile review of the secrets (docs/secrets.md), through the binary: a
// server that echoes its own secrets everywhere it can.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestSecretsEchoedByServer: a server that echoes the values of its
// secrets on its stdout (a line that is not JSON-RPC), in its
// notifications/message, on stderr as JSON (escaped) and split across
// lines (a PEM-like value of two lines), in its tools' descriptions and
// its instructions, in its error to logging/setLevel, in the log message
// the client is sent, has none of them in the gateway's log at --debug, in
// status's errors, in what clients are given (tools/list, initialize), nor
// in any file: not the snapshot (cache directory) nor the pin file
// (beside the configuration): each is masked.
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
		"TOKEN":                    "${secret:a.TOKEN}",
		"TESTBACKEND_STDOUT_TEXT":  "stdout says ${secret:a.TOKEN}",
		"TESTBACKEND_LOG_TEXT":     "log says ${secret:a.TOKEN}",
		"TESTBACKEND_STDERR_JSON":  "json says ${secret:a.TOKEN}",
		"TESTBACKEND_STDERR_TEXT":  "text says ${secret:a.PEM}",
		"TESTBACKEND_DESCRIBE":     " (uses key ${secret:a.TOKEN})",
		"TESTBACKEND_INSTRUCTIONS": "the key is ${secret:a.TOKEN}",
		"TESTBACKEND_REFUSE_LEVEL": "no level with ${secret:a.TOKEN}",
	}
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"trust": "pin", "answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
  "servers": [`+mustJSON(t, a)+`]}`)

	gw, init := initSession(t, startGateway(t, env, "--stdio", "--debug", "--config", cfg), "e2e", "{}")
	list := gw.Call("tools/list", `{}`).String()
	if !strings.Contains(list, "(uses key ***)") {
		t.Errorf("tools/list does not mask the key in a description:\n%.600s", list)
	}
	answers := "initialize: " + init.String() + "\ntools/list: " + list
	gw.Call("logging/setLevel", `{"level":"debug"}`)
	mark := gw.Mark()
	if r := gw.callTool("a.log", `{}`).Map(); r["error"] != nil {
		t.Fatalf("a.log: %v", r)
	}
	note := gw.WaitNote(mark, "notifications/message", testutil.DefaultTimeout).String()
	if !strings.Contains(note, "log says ***") {
		t.Errorf("the client's notifications/message does not mask the key: %s", note)
	}
	answers += "\nnotifications/message: " + note
	for _, text := range []string{"log says", "stdout says", `json says`, "text says", "logging/setLevel not accepted"} {
		waitStderr(t, gw, text)
	}
	gw.Stop(testutil.DefaultTimeout)

	forms := []string{`sek/"A"-5f1e`, `sek/\"A\"-5f1e`, "pem-line-one-0a1b", "pem-line-two-2c3d"}
	texts := map[string]string{"the log": gw.Stderr.String(), "the answers": answers}
	for p, data := range filesUnder(t, envHome(env), filepath.Dir(cfg)) {
		if !strings.HasPrefix(filepath.Base(p), "secrets.") { // the store's own files
			texts[p] = data
		}
	}
	var snapshot, pins bool
	for what, text := range texts {
		snapshot = snapshot || strings.Contains(what, "snapshots")
		pins = pins || strings.HasSuffix(what, ".pins.json")
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q", what, f)
			}
		}
	}
	if !snapshot || !pins {
		t.Errorf("no snapshot (%v) or no pin file (%v) among %d files", snapshot, pins, len(texts))
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

// envHome is env's HOME.
func envHome(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	return ""
}

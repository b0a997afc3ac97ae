package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// Paths of the binaries built once by TestMain.
var (
	gatewayBin string // built by scripts/build
	backendBin string
)

func TestMain(m *testing.M) {
	gatewayBin = testutil.MustBuild("./cmd/mcp-gateway", "scripts/build")
	backendBin = testutil.MustBuild("./backends/testbackend", "")
	os.Exit(m.Run())
}

// baseEnv is a clean environment for the gateway under test: no API key,
// no debug, no user config. GORACE=atexit_sleep_ms=0 spares each
// race-built process (gateway, reaper, testbackend) the race runtime's 1 s
// sleep at exit; races are still reported, and fail the tests through the
// exit status and stderr.
func baseEnv(t testing.TB, extra ...string) []string {
	home := t.TempDir() // USERPROFILE on Windows
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USERPROFILE=" + home, "NO_COLOR=1", "GORACE=atexit_sleep_ms=0"}
	// The temporary directory, and what Windows programs need to run at all.
	for _, k := range []string{"TMPDIR", "SystemRoot", "TEMP", "TMP", "PATHEXT", "ComSpec"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// proc is the gateway binary serving stdio, driven by raw bytes or, in
// line mode, by its testutil.Client: responses matched by id,
// notifications kept.
type proc struct {
	*testutil.Child
	t *testing.T
}

// startGateway runs the binary with args and env; it is killed at the end
// of the test if still running.
func startGateway(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return &proc{testutil.StartChild(t, gatewayBin, args, env, testutil.ClientOptions{}), t}
}

// send writes s as it is (with its own framing).
func (p *proc) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.Stdin, s); err != nil {
		p.t.Fatalf("write to gateway: %v", err)
	}
}

// readFramed reads one message, which must be Content-Length framed.
func (p *proc) readFramed() map[string]any {
	p.t.Helper()
	return decodeAs(p.t, p.Next(), true)
}

// readLine reads one line-delimited message.
func (p *proc) readLine() map[string]any {
	p.t.Helper()
	return decodeAs(p.t, p.Next(), false)
}

// decodeAs returns m as a map; it fails the test unless m came in this
// framing (Content-Length or a line) and is a JSON object.
func decodeAs(t *testing.T, m testutil.Msg, framed bool) map[string]any {
	t.Helper()
	v := m.Map()
	if m.Framed != framed || v == nil {
		t.Fatalf("want a JSON object, framed %v; got %s (framed %v)", framed, m, m.Framed)
	}
	return v
}

func frame(s string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(s), s) }

const (
	initMsg        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listMsg        = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	pingMsg        = `{"jsonrpc":"2.0","id":99,"method":"ping"}`
)

// errCode returns a reply's error code, or 0.
func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(json.Number)
	n, _ := code.Int64()
	return int(n)
}

// idOf returns a reply's id as JSON (`7`, `"s-7"`); `null` if it has none.
func idOf(m map[string]any) string {
	b, _ := json.Marshal(m["id"])
	return string(b)
}

func toolNames(t *testing.T, m map[string]any) []string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	var names []string
	for _, tool := range res["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

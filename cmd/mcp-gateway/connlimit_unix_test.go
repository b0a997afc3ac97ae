//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestHTTPConnectionFloodKeepsBackends: with the open-file limit at 256, a
// flood of 300 connections that never finish their request does not take
// the descriptors the backends need: a backend that crashed meanwhile
// restarts, /healthz is answered (503, naming the limit) instead of
// hanging, and once the flood ends everything is served again.
func TestHTTPConnectionFloodKeepsBackends(t *testing.T) {
	t.Parallel()
	crashy := tb("crashy")
	crashy.Restart = "on-failure"
	cfg := httpConfig(t, nil, crashy)
	cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$0" "$@"`, gatewayBin, "--transport", "http", "--listen", "127.0.0.1:0", "--config", cfg)
	cmd.Env = baseEnv(t)
	g := startHTTPCmd(t, cmd)
	if !strings.Contains(g.stderr.String(), "max_connections=96") {
		t.Errorf("the limit derived from 256 descriptors is not 96:\n%s", g.stderr)
	}
	ready := func() int { return strings.Count(g.stderr.String(), "backend ready") }
	testutil.WaitFor(t, testutil.DefaultTimeout, "crashy ready", func() bool { return ready() == 1 })

	// Crash it: it restarts after a second, while the flood holds.
	restCallQuiet(g.base, `{"server":"crashy","toolName":"crash","input":{}}`)
	addr := strings.TrimPrefix(g.base, "http://")
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range 300 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		// A request whose body never comes: the server waits for it up
		// to its read timeout (60 s).
		fmt.Fprintf(c, "POST /mcp/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", addr)
		flood = append(flood, c)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "crashy to restart during the flood", func() bool { return ready() == 2 })
	// A new connection each time (the idle one of the call above would
	// not need accepting).
	client := &http.Client{Timeout: testutil.DefaultTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(g.base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz during the flood: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Answered, not left hanging: 503 naming the limit, or — when a slot
	// came free meanwhile (a loaded machine may close one of the test's
	// own idle connections) — served.
	if resp.StatusCode == http.StatusServiceUnavailable && !strings.Contains(string(body), "gateway.http.max_connections") ||
		resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz during the flood: %d %q", resp.StatusCode, body)
	}

	for _, c := range flood {
		c.Close()
	}
	flood = nil
	testutil.WaitFor(t, testutil.DefaultTimeout, "/healthz after the flood", func() bool {
		r, err := client.Get(g.base + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	if status, body := restCallQuiet(g.base, `{"server":"crashy","toolName":"echo","input":{"n":1}}`); status != http.StatusOK {
		t.Errorf("crashy.echo after the flood: %d %s", status, body)
	}
	if strings.Contains(g.stderr.String(), "gave up") || !strings.Contains(g.stderr.String(), "refusing connections past the limit") {
		t.Errorf("log:\n%s", g.stderr)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestHTTPIdleConnectionsMakeRoom: with gateway.http.max_connections 20
// (and as many per source: the test connects from one address),
// keep-alive connections left idle after one unauthenticated GET /healthz
// each — 25 of them — do not shut out an authenticated caller: each new
// connection closes an idle one, and the caller's request is served.
// /status counts the open connections and the idle ones.
func TestHTTPIdleConnectionsMakeRoom(t *testing.T) {
	t.Parallel()
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN", "max_connections": 20, "max_connections_per_source": 20}}, tb("tb")),
		"GW_TOKEN=s3cret")
	addr := strings.TrimPrefix(g.base, "http://")
	get := func(c net.Conn, br *bufio.Reader, path string, auth bool) (int, string) {
		t.Helper()
		h := ""
		if auth {
			h = "Authorization: Bearer s3cret\r\n"
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", path, addr, h)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	dial := func() (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	idle := func() int {
		t.Helper()
		c, br := dial()
		status, _ := get(c, br, "/healthz", false)
		return status
	}
	// The limit's 20 slots: this connection, which reads /status, and 19
	// idle ones, which the gateway knows idle before more come.
	sc, sbr := dial()
	for i := range 19 {
		if status := idle(); status != http.StatusOK {
			t.Fatalf("idle connection %d: %d", i, status)
		}
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "19 idle connections", func() bool {
		status, body := get(sc, sbr, "/status", true)
		var st struct{ Connections connCounts }
		if status != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("/status: %d %s", status, body)
		}
		return st.Connections.Open == 20 && st.Connections.Idle == 19 // all but this one, busy answering
	})
	for i := range 5 {
		if status := idle(); status != http.StatusOK {
			t.Errorf("idle connection %d past the limit: %d, want it served in place of an idle one", 19+i, status)
		}
	}
	client := &http.Client{Timeout: testutil.DefaultTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodGet, g.base+"/mcp/tools", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "tb") {
		t.Errorf("an authenticated request with every slot held by idle connections: %d %s", resp.StatusCode, body)
	}
}

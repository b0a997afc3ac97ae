package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestConnectionLimit: the connection limit derived from the open-file
// limit leaves the backends half, and a configured one is kept, with a
// warning when it leaves them little.
func TestConnectionLimit(t *testing.T) {
	for _, c := range []struct {
		configured int
		files      uint64
		want       int
		warn       bool
	}{
		{0, 1024, 480, false},
		{0, 256, 96, false},
		{0, 40, 1, false},
		{0, 1 << 20, maxDerivedConnections, false},
		{0, 0, maxDerivedConnections, false}, // unknown (Windows)
		{100, 1024, 100, false},
		{900, 1024, 900, true},
		{900, 0, 900, false},
	} {
		got, warn := connectionLimit(c.configured, c.files)
		if got != c.want || (warn != "") != c.warn {
			t.Errorf("connectionLimit(%d, %d) = %d, %q; want %d, warning %v", c.configured, c.files, got, warn, c.want, c.warn)
		}
	}
}

// connHarness is an HTTP server behind a limitListener, wired as
// serveHTTP wires it: /healthz open, /mcp/tools only with the bearer
// token, /hold answered when the test releases it. idle receives each
// connection's going idle.
type connHarness struct {
	t       *testing.T
	ln      *limitListener
	addr    string
	idle    chan struct{}
	held    chan struct{} // a /hold request has arrived
	release chan struct{}
}

func newConnHarness(t *testing.T, limit, perSource int) *connHarness {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &connHarness{t: t, addr: inner.Addr().String(), idle: make(chan struct{}, 1000), held: make(chan struct{}, 100), release: make(chan struct{})}
	h.ln = newLimitListener(inner, limit, perSource, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /mcp/tools", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "[]\n")
	})
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, _ *http.Request) {
		h.held <- struct{}{}
		<-h.release
		io.WriteString(w, "released\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: httpReadHeaderTimeout, IdleTimeout: httpIdleTimeout,
		ConnState: func(c net.Conn, s http.ConnState) {
			h.ln.connState(c, s)
			if s == http.StateIdle {
				h.idle <- struct{}{}
			}
		}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(h.ln) }()
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		srv.Close()
		<-served
	})
	return h
}

// dial opens a keep-alive connection from the local address from ("" for
// any) and sends GET path on it.
func (h *connHarness) dial(from, path string) (net.Conn, *bufio.Reader) {
	h.t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, h.addr)
	return c, bufio.NewReader(c)
}

// get reads the answer of the request dial sent.
func (h *connHarness) get(br *bufio.Reader) (int, string) {
	h.t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		h.t.Fatalf("read answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// idleConn opens a connection, GETs /healthz on it and leaves it idle
// (once the server says so); it reports the status.
func (h *connHarness) idleConn(from string) int {
	h.t.Helper()
	_, br := h.dial(from, "/healthz")
	status, _ := h.get(br)
	if status == http.StatusOK {
		<-h.idle
	}
	return status
}

func (h *connHarness) open() int {
	h.ln.mu.Lock()
	defer h.ln.mu.Unlock()
	return len(h.ln.open)
}

// TestIdleConnectionsMakeRoom: at the connection limit (20), idle
// keep-alive connections (each after one unauthenticated GET /healthz) do
// not shut anyone out: each new connection closes the one idle longest,
// and an authenticated request is served. Connections with a request in
// flight are never closed for room; when every slot holds one, a new
// connection is refused with 503 naming the limit.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	h := newConnHarness(t, 20, 1000)
	held, heldBR := h.dial("", "/hold")
	defer held.Close()
	<-h.held
	for i := range 25 {
		if status := h.idleConn(""); status != http.StatusOK {
			t.Fatalf("idle connection %d: %d", i, status)
		}
	}
	if n := h.open(); n != 20 {
		t.Errorf("%d connections open, want the limit, 20", n)
	}
	c, br := h.dial("", "/mcp/tools")
	fmt.Fprintf(c, "GET /mcp/tools HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer s3cret\r\n\r\n", h.addr)
	if status, body := h.get(br); status != http.StatusUnauthorized {
		t.Errorf("a request without the token: %d %q", status, body)
	}
	if status, body := h.get(br); status != http.StatusOK {
		t.Fatalf("an authenticated request at the limit: %d %q", status, body)
	}
	c.Close()

	// Fill every slot with requests in flight: the next is refused.
	for i := range 19 {
		_, _ = h.dial("", "/hold")
		select {
		case <-h.held:
		case <-h.release:
			t.Fatalf("hold %d", i)
		}
	}
	_, br = h.dial("", "/healthz")
	if status, body := h.get(br); status != http.StatusServiceUnavailable || !strings.Contains(body, "gateway.http.max_connections)") {
		t.Errorf("a connection past 20 busy ones: %d %q", status, body)
	}
	close(h.release)
	if status, body := h.get(heldBR); status != http.StatusOK || body != "released\n" {
		t.Errorf("the request in flight throughout: %d %q", status, body)
	}
}

// TestConnectionsPerSource: one address holds at most perSource
// connections: its idle ones make room for its next, and when all are
// busy its next is refused with 503 naming max_connections_per_source,
// while another address is still served.
func TestConnectionsPerSource(t *testing.T) {
	h := newConnHarness(t, 100, 3)
	for i := range 5 {
		if status := h.idleConn(""); status != http.StatusOK {
			t.Fatalf("idle connection %d: %d", i, status)
		}
	}
	if n := h.open(); n != 3 {
		t.Errorf("%d connections open from one address, want 3", n)
	}
	for range 3 {
		h.dial("", "/hold")
		<-h.held
	}
	_, br := h.dial("", "/healthz")
	if status, body := h.get(br); status != http.StatusServiceUnavailable || !strings.Contains(body, "gateway.http.max_connections_per_source") {
		t.Errorf("a fourth connection from the address: %d %q", status, body)
	}
	if runtime.GOOS != "linux" { // all of 127.0.0.0/8 is this machine's
		return
	}
	if status := h.idleConn("127.0.0.2"); status != http.StatusOK {
		t.Errorf("a connection from another address: %d", status)
	}
}

// TestHalfHeadersMakeRoom: connections that send half a request head (or
// nothing) and wait - slowloris - cost a slot as idle ones do, and make
// room as they do: at the limit (20), 25 of them shut nobody out, each
// new connection closes the one waiting longest for its head, and an
// authenticated request is served. They were not idle to the listener
// (no request had ended on them), so every new connection was refused
// with 503 for as long as they were renewed (10 s each).
func TestHalfHeadersMakeRoom(t *testing.T) {
	h := newConnHarness(t, 20, 1000)
	held, heldBR := h.dial("", "/hold")
	defer held.Close()
	<-h.held
	var half []net.Conn
	for range 25 {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", h.addr) // and no end
		half = append(half, c)
	}
	c, br := h.dial("", "/mcp/tools")
	defer c.Close()
	fmt.Fprintf(c, "GET /mcp/tools HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer s3cret\r\n\r\n", h.addr)
	if status, body := h.get(br); status != http.StatusUnauthorized {
		t.Fatalf("a request past 25 half heads: %d %q", status, body)
	}
	if status, body := h.get(br); status != http.StatusOK {
		t.Fatalf("an authenticated request: %d %q", status, body)
	}
	// The first half head was closed for room: its client reads the end.
	if n, err := half[0].Read(make([]byte, 1)); err == nil {
		t.Errorf("the connection waiting longest for its head is still open (%d bytes)", n)
	}
	close(h.release)
	if status, body := h.get(heldBR); status != http.StatusOK || body != "released\n" {
		t.Errorf("the request in flight throughout: %d %q", status, body)
	}
}

// TestSourceOfIPv6Network: max_connections_per_source counts an IPv6
// client by its /64, which one subscriber holds whole: by the exact
// address, a client with a /64 (any home line) had no per-source limit.
// An IPv4 address written as IPv6 (a dual-stack listener) is the IPv4
// one.
func TestSourceOfIPv6Network(t *testing.T) {
	src := func(ip string) string { return sourceOf(&net.TCPAddr{IP: net.ParseIP(ip), Port: 1234}) }
	if a, b := src("2001:db8:1:2::1"), src("2001:db8:1:2:ffff:1:2:3"); a != b {
		t.Errorf("two addresses of one /64: %q, %q", a, b)
	}
	if a, b := src("2001:db8:1:2::1"), src("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s: both %q", a)
	}
	if a, b := src("::ffff:192.0.2.1"), src("192.0.2.1"); a != b || a != "192.0.2.1" {
		t.Errorf("IPv4 written as IPv6: %q, %q", a, b)
	}
	if a, b := src("192.0.2.1"), src("192.0.2.2"); a == b {
		t.Errorf("two IPv4 addresses: both %q", a)
	}
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// TestUnreadBodyNotWaitedFor: a request the guard refuses, or one whose
// method carries no body (GET /healthz), is answered without waiting for
// its body, and its connection closed. Go's server reads up to 256 KB of a
// body nobody read before it writes the answer, so a client that sent a
// head and trickled the body (slow POST, no token needed) held a
// connection with a request in flight - never closed to make room - until
// the 60 s read timeout: twenty of them shut everyone out of a limit of
// twenty.
func TestUnreadBodyNotWaitedFor(t *testing.T) {
	g := &guard{auth: "token", token: []byte("s3cret"), tokenP: authn.Token([]byte("s3cret")), loopback: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v\n", len(b), err)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g.wrap(mux), ReadHeaderTimeout: httpReadHeaderTimeout}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	ask := func(head, body string) (*http.Response, net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Only a bound on a test that fails: the answer comes at once.
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "%s\r\nHost: %s\r\n\r\n%s", head, addr, body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", head, err)
		}
		resp.Body.Close()
		return resp, c
	}
	// A whole body of a refused request: the answer closes the connection
	// (no body of a next request is read as the rest of this one).
	if resp, _ := ask("POST /mcp HTTP/1.1\r\nContent-Length: 3", "abc"); resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("refused with its whole body: %d, closes %v", resp.StatusCode, resp.Close)
	}
	for _, c := range []struct {
		head string
		want int
	}{
		{"POST /mcp HTTP/1.1\r\nContent-Length: 100", http.StatusUnauthorized},
		{"POST /mcp HTTP/1.1\r\nAuthorization: Bearer wrong\r\nTransfer-Encoding: chunked", http.StatusUnauthorized},
		{"GET /healthz HTTP/1.1\r\nContent-Length: 100", http.StatusOK},
	} {
		resp, conn := ask(c.head, "a") // and the rest never
		if resp.StatusCode != c.want || !resp.Close {
			t.Errorf("%q: %d, closes %v", c.head, resp.StatusCode, resp.Close)
		}
		if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%q: the connection stays open (%d, %v)", c.head, n, err)
		}
	}
	// The token's holder's body is read whole, and the connection kept.
	resp, _ := ask("POST /mcp HTTP/1.1\r\nAuthorization: Bearer s3cret\r\nContent-Length: 3", "abc")
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Errorf("an authenticated POST: %d, closes %v", resp.StatusCode, resp.Close)
	}
}

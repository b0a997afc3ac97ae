package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestHTTPIdleSessionExpires: a session with an open GET stream is not
// idle; once it has nothing open it ends after the idle timeout, its id
// gets 404, and every goroutine it had is gone.
func TestHTTPIdleSessionExpires(t *testing.T) {
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	const timeout = 200 * time.Millisecond
	front := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{IdleTimeout: timeout})
	srv := httptest.NewServer(http.HandlerFunc(front.ServeMCP))
	defer srv.Close()
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	baseline := runtime.NumGoroutine()

	// do sends a request and reads its whole answer (its connection
	// closes: no client goroutine stays).
	do := func(method, sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(sessionIDHeader, sid)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(data)
	}
	init, body := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
	sid := init.Header.Get(sessionIDHeader)
	if sid == "" || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: session %q, %s", sid, body)
	}
	if r, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.StatusCode)
	}

	// An open GET stream keeps the session for many timeouts.
	ctx, closeGET := context.WithCancel(context.Background())
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(sessionIDHeader, sid)
	stream, err := client.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", err, stream)
	}
	time.Sleep(5 * timeout) // what is measured is that nothing happens
	if n := front.Sessions(); n != 1 {
		t.Fatalf("%d sessions with a GET stream open, want 1", n)
	}
	closeGET()
	stream.Body.Close()

	deadline := time.Now().Add(10 * time.Second)
	for front.Sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session did not expire")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("expired session: %d, want 404", r.StatusCode)
	}
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, baseline %d:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

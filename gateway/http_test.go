package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPIdleSessionExpires: a session with an open GET stream is not
// idle; once it has nothing open it ends after the idle timeout, its id
// gets 404, and every goroutine it had is gone.
func TestHTTPIdleSessionExpires(t *testing.T) {
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	const timeout = 200 * time.Millisecond
	front := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{IdleTimeout: timeout})
	srv := httptest.NewServer(http.HandlerFunc(front.serveMCP))
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
	// A session is idle between the client's requests too: a test
	// process that stalls longer than the timeout between them (a busy
	// machine) loses it before its GET, as it must, and starts over.
	var (
		sid      string
		stream   *http.Response
		closeGET context.CancelFunc
	)
	for attempt := 1; ; attempt++ {
		init, body := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
		sid = init.Header.Get(sessionIDHeader)
		if sid == "" || !strings.Contains(body, `"serverInfo"`) {
			t.Fatalf("initialize: session %q, %s", sid, body)
		}
		r, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if r.StatusCode == http.StatusNotFound && attempt < 10 {
			continue
		}
		if r.StatusCode != http.StatusAccepted {
			t.Fatalf("initialized: %d", r.StatusCode)
		}
		// An open GET stream keeps the session for many timeouts.
		var ctx context.Context
		ctx, closeGET = context.WithCancel(context.Background())
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set(sessionIDHeader, sid)
		var err error
		stream, err = client.Do(get)
		if err == nil && stream.StatusCode == http.StatusNotFound && attempt < 10 {
			stream.Body.Close()
			closeGET()
			continue
		}
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("GET: %v %v", err, stream)
		}
		break
	}
	time.Sleep(5 * timeout) // what is measured is that nothing happens
	if n := front.Sessions(); n != 1 {
		t.Fatalf("%d sessions with a GET stream open, want 1", n)
	}
	closeGET()
	stream.Body.Close()

	testutil.WaitFor(t, 10*time.Second, "the idle session to expire", func() bool { return front.Sessions() == 0 })
	if r, _ := do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("expired session: %d, want 404", r.StatusCode)
	}
	if !testutil.Poll(10*time.Second, func() bool { return runtime.NumGoroutine() <= baseline }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, baseline %d:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
	}
}

// TestHTTPStreamableRules: the status codes of the Streamable HTTP
// transport, as go-sdk's transport answered them.
func TestHTTPStreamableRules(t *testing.T) {
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	front := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(front.serveMCP))
	defer srv.Close()
	defer front.Close()

	do := func(method string, hdr map[string]string, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	init, body := do(http.MethodPost, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rules","version":"1"}}}`)
	sid := init.Header.Get(sessionIDHeader)
	if sid == "" || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: %q %s", sid, body)
	}
	session := map[string]string{sessionIDHeader: sid, "Mcp-Protocol-Version": "2025-06-18"}
	if r, _ := do(http.MethodPost, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d, want 202", r.StatusCode)
	}
	if r, body := do(http.MethodPost, session, `{"jsonrpc":"2.0","id":"p","method":"ping"}`); r.StatusCode != http.StatusOK || !strings.Contains(body, `"id":"p","result":{}`) {
		t.Errorf("ping: %d %s", r.StatusCode, body)
	}
	for _, c := range []struct {
		name   string
		method string
		hdr    map[string]string
		body   string
		want   int
	}{
		{"unserved version", http.MethodPost, map[string]string{sessionIDHeader: sid, "Mcp-Protocol-Version": "1999-01-01"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, http.StatusBadRequest},
		{"batch in 2025-06-18", http.MethodPost, session, `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, http.StatusBadRequest},
		// Its answers could not be told apart (the second completed the
		// first's entry, and the POST hung).
		{"one id twice in a batch", http.MethodPost, map[string]string{sessionIDHeader: sid, "Mcp-Protocol-Version": "2025-03-26"}, `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, http.StatusBadRequest},
		{"not JSON-RPC", http.MethodPost, session, `{"jsonrpc":"1.0","id":4,"method":"ping"}`, http.StatusBadRequest},
		{"empty body", http.MethodPost, session, ``, http.StatusBadRequest},
		{"Last-Event-ID on a POST", http.MethodPost, map[string]string{sessionIDHeader: sid, "Last-Event-ID": "x_1"}, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, http.StatusBadRequest},
		{"unknown session", http.MethodPost, map[string]string{sessionIDHeader: "nope"}, `{"jsonrpc":"2.0","id":6,"method":"ping"}`, http.StatusNotFound},
		{"GET without a session", http.MethodGet, nil, ``, http.StatusBadRequest},
		// Only initialize starts a session (nobody could reach another).
		{"notification without a session", http.MethodPost, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusBadRequest},
		{"request without a session", http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":8,"method":"ping"}`, http.StatusBadRequest},
		// Versions are compared as dates: no string may pass for a later one.
		{"malformed version", http.MethodPost, map[string]string{sessionIDHeader: sid, "Mcp-Protocol-Version": "zzz"}, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, http.StatusBadRequest},
		{"malformed Last-Event-ID", http.MethodGet, map[string]string{sessionIDHeader: sid, "Last-Event-ID": "x"}, ``, http.StatusBadRequest},
		{"PUT", http.MethodPut, nil, ``, http.StatusMethodNotAllowed},
	} {
		if r, body := do(c.method, c.hdr, c.body); r.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, r.StatusCode, body, c.want)
		}
	}

	// A request of 2026-07-28 needs no session: it is answered on its
	// own, and leaves none behind; its error says its kind in the HTTP
	// status too (ping is gone from that revision: 404; a request without
	// its _meta: 400), and its headers must say what its body says.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name, method, body string
		want               int
		code               string
	}{
		{"ping of 2026-07-28", "ping", `{"jsonrpc":"2.0","id":10,"method":"ping","params":{` + meta + `}}`, http.StatusNotFound, `"code":-32601`},
		{"without _meta", "ping", `{"jsonrpc":"2.0","id":11,"method":"ping"}`, http.StatusBadRequest, `"code":-32602`},
		{"Mcp-Method not the body's", "tools/list", `{"jsonrpc":"2.0","id":12,"method":"prompts/list","params":{` + meta + `}}`, http.StatusBadRequest, `"code":-32020`},
		{"tools/list", "tools/list", `{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{` + meta + `}}`, http.StatusOK, `"resultType":"complete"`},
	} {
		r, body := do(http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": c.method}, c.body)
		if r.StatusCode != c.want || r.Header.Get(sessionIDHeader) != "" || !strings.Contains(body, c.code) {
			t.Errorf("%s: %d %q %s, want %d and %s", c.name, r.StatusCode, r.Header.Get(sessionIDHeader), body, c.want, c.code)
		}
	}
	if n := front.Sessions(); n != 1 {
		t.Errorf("%d sessions, want the initialized one", n)
	}

	// One standalone stream at a time.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(sessionIDHeader, sid)
	stream, err := http.DefaultClient.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", err, stream)
	}
	defer stream.Body.Close()
	if r, _ := do(http.MethodGet, map[string]string{sessionIDHeader: sid}, ``); r.StatusCode != http.StatusConflict {
		t.Errorf("second GET stream: %d, want 409", r.StatusCode)
	}

	if r, _ := do(http.MethodDelete, map[string]string{sessionIDHeader: sid}, ``); r.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %d, want 204", r.StatusCode)
	}
	if r, _ := do(http.MethodPost, session, `{"jsonrpc":"2.0","id":7,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d, want 404", r.StatusCode)
	}
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Errorf("the GET stream after DELETE: %v, want its end", err)
	}
}

// The answers of one POST's calls, given from two goroutines, are both
// queued for the POST's writer before its stream completes: a stream's
// last answer is counted and queued under one lock. (The count was kept
// apart, and an answer could be queued after the writer had seen the end:
// the client never got it on the POST.)
func TestPOSTStreamCompletesAfterEveryAnswer(t *testing.T) {
	for range 20000 {
		h := newHTTPSession(httpSessionOptions{ID: "S", Stop: func() {}, BufferBytes: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
		st := &sseStream{id: "P", pending: 2, last: -1, end: make(chan struct{})}
		q := st.attach(h)
		end := st.end
		h.streams[st.id] = st
		h.calls["1"], h.calls["2"] = st, st
		var wg sync.WaitGroup
		for _, id := range []string{"1", "2"} {
			wg.Go(func() { _ = h.WriteFor(json.RawMessage(id), "", []byte(`{"id":`+id+`}`), true) })
		}
		<-end
		n := len(q.Take()) // what the writer takes once it sees the end
		wg.Wait()
		if n != 2 {
			t.Fatalf("the stream completed with %d of its 2 answers queued", n)
		}
	}
}

// The HTTP session tells its store when a POST's stream is complete: a
// session that answers many calls on event streams keeps only the last
// ones for a resume.
func TestHTTPSessionForgetsCompletedStreams(t *testing.T) {
	s := streamhttp.NewEventStore(10<<20, 100)
	h := newHTTPSession(httpSessionOptions{ID: "S", Store: s, Stop: func() {}, BufferBytes: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	for i := range 1000 {
		st := &sseStream{id: fmt.Sprint("P", i), pending: 1, last: -1, end: make(chan struct{})}
		st.attach(h)
		h.streams[st.id] = st
		h.calls["1"] = st
		if err := h.WriteFor(json.RawMessage("1"), "", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), true); err != nil {
			t.Fatal(err)
		}
	}
	var kept []int // the streams whose event replays
	for i := range 1000 {
		for _, err := range s.After(context.Background(), "S", fmt.Sprint("P", i), -1) {
			if err == nil {
				kept = append(kept, i)
			} else if !errors.Is(err, mcp.ErrEventsPurged) {
				t.Fatal(err)
			}
		}
	}
	if len(kept) != 100 || kept[0] != 900 {
		t.Errorf("the store keeps streams %v of the 1,000 completed, want the last 100", kept)
	}
}

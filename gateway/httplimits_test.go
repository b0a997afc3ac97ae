package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
)

// limitsHarness is an HTTP front with small limits behind a real server.
type limitsHarness struct {
	t     *testing.T
	front *HTTPFront
	url   string
}

func newLimitsHarness(t *testing.T, opts HTTPOptions) *limitsHarness {
	t.Helper()
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	return newLimitsHarnessCfg(t, cfg, opts)
}

// newLimitsHarnessCfg is newLimitsHarness with a configuration; a request
// with an X-Caller header comes from the principal of that key, one with
// X-Token from the holder of that shared token (auth: token), and one
// with X-Remote from that client address.
func newLimitsHarnessCfg(t *testing.T, cfg *config.Config, opts HTTPOptions) *limitsHarness {
	t.Helper()
	front := New(Options{Config: cfg}).NewHTTPFront(opts)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", front.serveMCP)
	mux.HandleFunc("/sse", front.serveSSE)
	mux.HandleFunc("/messages", front.serveMessages)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("X-Caller"); k != "" {
			r = r.WithContext(WithPrincipal(r.Context(), &authn.Principal{Key: k, Identity: policy.Identity{Auth: "oauth"}}))
		}
		if tok := r.Header.Get("X-Token"); tok != "" {
			r = r.WithContext(WithPrincipal(r.Context(), authn.Token([]byte(tok))))
		}
		if a := r.Header.Get("X-Remote"); a != "" {
			r.RemoteAddr = a
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(front.Close) // before srv.Close: open streams end first
	return &limitsHarness{t: t, front: front, url: srv.URL}
}

// do sends a request and reads its whole answer.
func (h *limitsHarness) do(method, path, sid, body string) (*http.Response, string) {
	h.t.Helper()
	return h.doAs("", method, path, sid, body)
}

// doAs is do as the caller of key (X-Caller).
func (h *limitsHarness) doAs(caller, method, path, sid, body string) (*http.Response, string) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if caller != "" {
		req.Header.Set("X-Caller", caller)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionIDHeader, sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func (h *limitsHarness) initialize() (*http.Response, string) {
	h.t.Helper()
	return h.do(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"limits","version":"1"}}}`)
}

// stream opens an event stream (GET path, with the session id if any) and
// returns its response, open, and a func that closes it.
func (h *limitsHarness) stream(path, sid string) (*http.Response, func()) {
	h.t.Helper()
	return h.streamAs("", path, sid)
}

// streamAs is stream as the caller of key (X-Caller).
func (h *limitsHarness) streamAs(caller, path, sid string) (*http.Response, func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url+path, nil)
	if caller != "" {
		req.Header.Set("X-Caller", caller)
	}
	req.Header.Set("Accept", "text/event-stream")
	if sid != "" {
		req.Header.Set(sessionIDHeader, sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	closeIt := func() { cancel(); resp.Body.Close() }
	h.t.Cleanup(closeIt)
	return resp, closeIt
}

// TestHTTPSessionAndStreamLimits: past gateway.http.max_sessions a new
// session (initialize, or an /sse stream) is refused with 503 and a body
// that names the limit; past max_streams so is an event stream (GET /mcp,
// GET /sse). Ending a session or closing a stream makes room again.
func TestHTTPSessionAndStreamLimits(t *testing.T) {
	store := streamhttp.NewEventStore(10<<20, 100)
	h := newLimitsHarness(t, HTTPOptions{MaxSessions: 3, MaxSessionsPerIdentity: 3, MaxStreams: 2, events: store})
	var sids []string
	for range 3 {
		r, body := h.initialize()
		if r.StatusCode != http.StatusOK || r.Header.Get(sessionIDHeader) == "" {
			t.Fatalf("initialize: %d %s", r.StatusCode, body)
		}
		sids = append(sids, r.Header.Get(sessionIDHeader))
	}
	for range 5 {
		if r, body := h.initialize(); r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "limit of 3 open sessions (gateway.http.max_sessions)") {
			t.Errorf("a fourth session: %d %q", r.StatusCode, body)
		}
	}
	// A refused session leaves nothing behind, in the event store either.
	kept := store.Sessions()
	if kept != 3 {
		t.Errorf("the event store holds %d sessions, want the 3 open ones", kept)
	}
	if r, body := h.do(http.MethodGet, "/sse", "", ""); r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "gateway.http.max_sessions") {
		t.Errorf("an /sse stream past max_sessions: %d %q", r.StatusCode, body)
	}
	if r, _ := h.do(http.MethodDelete, "/mcp", sids[2], ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.StatusCode)
	}
	r, body := h.initialize()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("a session after a DELETE: %d %s", r.StatusCode, body)
	}
	sids[2] = r.Header.Get(sessionIDHeader)

	first, closeFirst := h.stream("/mcp", sids[0])
	second, _ := h.stream("/mcp", sids[1])
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("GET streams: %d %d", first.StatusCode, second.StatusCode)
	}
	third, closeThird := h.stream("/mcp", sids[2])
	if third.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third stream: %d, want 503", third.StatusCode)
		closeThird()
	} else if body, _ := io.ReadAll(third.Body); !strings.Contains(string(body), "limit of 2 open event streams (gateway.http.max_streams)") {
		t.Errorf("a third stream: %q", body)
	}
	closeFirst()
	testutil.WaitFor(t, 10*time.Second, "the closed stream's slot", func() bool { return h.front.Streams() == 1 })
	if again, _ := h.stream("/mcp", sids[2]); again.StatusCode != http.StatusOK {
		t.Errorf("a stream after one closed: %d", again.StatusCode)
	}
}

// TestHTTPSSEStreamNobodyUses: an /sse stream whose client posts nothing
// ends after SSEHandshakeTimeout (it held a session and a stream); one
// whose client posted initialize stays open.
func TestHTTPSSEStreamNobodyUses(t *testing.T) {
	const handshake = time.Second
	h := newLimitsHarness(t, HTTPOptions{SSEHandshakeTimeout: handshake})
	endpoint := func(resp *http.Response) (*bufio.Reader, string) {
		t.Helper()
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("no endpoint event: %v", err)
			}
			if rest, ok := strings.CutPrefix(line, "data: "); ok {
				return br, strings.TrimSpace(rest)
			}
		}
	}
	idle, _ := h.stream("/sse", "")
	idleBody, _ := endpoint(idle)
	used, _ := h.stream("/sse", "")
	_, ep := endpoint(used)
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialize on %s: %d %s", ep, r.StatusCode, body)
	}
	if h.front.Sessions() != 2 || h.front.Streams() != 2 {
		t.Fatalf("%d sessions, %d streams, want 2 and 2", h.front.Sessions(), h.front.Streams())
	}
	// The unused stream ends by itself: its body reaches EOF.
	ended := make(chan error, 1)
	go func() { _, err := io.ReadAll(idleBody); ended <- err }()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the unused stream: %v", err)
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the unused stream did not end")
	}
	testutil.WaitFor(t, 10*time.Second, "the unused stream's session to go", func() bool { return h.front.Sessions() == 1 })
	time.Sleep(2 * handshake) // what is checked is that the used stream does not end
	if h.front.Sessions() != 1 || h.front.Streams() != 1 {
		t.Errorf("%d sessions, %d streams after the handshake time, want the used one", h.front.Sessions(), h.front.Streams())
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"limits","version":"1"}}}`

// TestHTTPSessionsPerIdentity: one caller cannot take every session, by
// initialize or by GET /sse: past gateway.http.max_sessions_per_identity
// (half of max_sessions by default) its next is refused with 503 naming
// that limit, and another caller still opens one; a caller's session it
// ended makes room for its next.
func TestHTTPSessionsPerIdentity(t *testing.T) {
	h := newLimitsHarness(t, HTTPOptions{MaxSessions: 8, MaxStreams: 100})
	var sids []string
	refused := 0
	for i := range 10 { // bounded: 8 would fill max_sessions
		if i%2 == 0 {
			r, body := h.doAs("mallory", http.MethodPost, "/mcp", "", initializeBody)
			switch r.StatusCode {
			case http.StatusOK:
				sids = append(sids, r.Header.Get(sessionIDHeader))
			case http.StatusServiceUnavailable:
				if !strings.Contains(body, "gateway.http.max_sessions_per_identity") {
					t.Errorf("refusal names another limit: %q", body)
				}
				refused++
			default:
				t.Fatalf("initialize: %d %s", r.StatusCode, body)
			}
			continue
		}
		r, _ := h.streamAs("mallory", "/sse", "")
		switch r.StatusCode {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			if body, _ := io.ReadAll(r.Body); !strings.Contains(string(body), "gateway.http.max_sessions_per_identity") {
				t.Errorf("refusal names another limit: %q", body)
			}
			refused++
		default:
			t.Fatalf("GET /sse: %d", r.StatusCode)
		}
	}
	if n := h.front.Sessions(); n != 4 || refused != 6 {
		t.Errorf("one caller holds %d of 8 sessions (%d refused), want 4 (6 refused)", n, refused)
	}
	if r, body := h.doAs("alice", http.MethodPost, "/mcp", "", initializeBody); r.StatusCode != http.StatusOK {
		t.Errorf("another caller's initialize: %d %s", r.StatusCode, body)
	}
	if r, _ := h.streamAs("alice", "/sse", ""); r.StatusCode != http.StatusOK {
		t.Errorf("another caller's GET /sse: %d", r.StatusCode)
	}
	if r, _ := h.doAs("mallory", http.MethodDelete, "/mcp", sids[0], ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.StatusCode)
	}
	if r, body := h.doAs("mallory", http.MethodPost, "/mcp", "", initializeBody); r.StatusCode != http.StatusOK {
		t.Errorf("initialize after a DELETE: %d %s", r.StatusCode, body)
	}
}

// TestHTTPSessionsPerIdentitySharedToken: with auth: token every holder
// of the token is one principal, which tells no caller apart; a session
// counts against its client's address, as without authentication. Keyed
// by the token, the whole team shared half of max_sessions and the other
// half served nobody.
func TestHTTPSessionsPerIdentitySharedToken(t *testing.T) {
	h := newLimitsHarness(t, HTTPOptions{MaxSessions: 8, MaxStreams: 100})
	initAt := h.initializeAt("team")
	for i := range 4 {
		if r, body := initAt("192.0.2.1:1000"); r.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d from one machine: %d %s", i, r.StatusCode, body)
		}
	}
	if r, body := initAt("192.0.2.1:1001"); r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions_per_identity") {
		t.Errorf("a 5th from the same machine: %d %s", r.StatusCode, body)
	}
	for i := range 4 {
		if r, body := initAt("192.0.2.2:1000"); r.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d of another holder of the token: %d %s", i, r.StatusCode, body)
		}
	}
}

// TestHTTPSessionsPerIdentityIPv6Network: a caller told apart by its
// address is, for IPv6, told apart by its /64, which one subscriber holds
// whole: by the exact address, a client with a /64 opened
// max_sessions_per_identity sessions from each of its addresses.
func TestHTTPSessionsPerIdentityIPv6Network(t *testing.T) {
	h := newLimitsHarness(t, HTTPOptions{MaxSessions: 8, MaxStreams: 100})
	initAt := h.initializeAt("")
	for i := range 4 {
		if r, body := initAt(fmt.Sprintf("[2001:db8:1:2::%x]:1000", i+1)); r.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d: %d %s", i, r.StatusCode, body)
		}
	}
	if r, body := initAt("[2001:db8:1:2:ffff::1]:1000"); r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions_per_identity") {
		t.Errorf("a 5th from another address of the /64: %d %s", r.StatusCode, body)
	}
	if r, body := initAt("[2001:db8:1:3::1]:1000"); r.StatusCode != http.StatusOK {
		t.Errorf("another /64: %d %s", r.StatusCode, body)
	}
}

// initializeAt returns a function that sends initialize from a client
// address, as a holder of token (none if "").
func (h *limitsHarness) initializeAt(token string) func(addr string) (*http.Response, string) {
	return func(addr string) (*http.Response, string) {
		h.t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.url+"/mcp", strings.NewReader(initializeBody))
		if token != "" {
			req.Header.Set("X-Token", token)
		}
		req.Header.Set("X-Remote", addr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			h.t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
}

// TestHTTPSSERateLimited: GET /sse opens a session, and counts against the
// caller's identity rate limit as a request: past its burst it gets 429
// with Retry-After; another caller's is served.
func TestHTTPSSERateLimited(t *testing.T) {
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Gateway.RateLimits.Identity = config.Rate{PerMinute: 1, Burst: 3}
	h := newLimitsHarnessCfg(t, cfg, HTTPOptions{})
	for i := range 3 {
		if r, _ := h.streamAs("mallory", "/sse", ""); r.StatusCode != http.StatusOK {
			t.Fatalf("GET /sse %d within the burst: %d", i, r.StatusCode)
		}
	}
	r, _ := h.streamAs("mallory", "/sse", "")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("GET /sse past the burst: %d (Retry-After %q), want 429", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if r, _ := h.streamAs("alice", "/sse", ""); r.StatusCode != http.StatusOK {
		t.Errorf("another caller's GET /sse: %d", r.StatusCode)
	}
	if n := h.front.Sessions(); n != 4 {
		t.Errorf("%d sessions, want 4", n)
	}
}

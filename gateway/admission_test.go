package gateway

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// TestSSEMessagesAdmitWhatIsServed (issue 32): a POST to an SSE session's
// /messages is admitted as it is read — counted in the caller's identity
// bucket — and a body the gateway cannot read strictly (a stray member
// with invalid UTF-8) is refused, as on /mcp. It used to skip admission
// and go to go-sdk's transport, which served it: a caller past its limit
// still had every such request served.
func TestSSEMessagesAdmitWhatIsServed(t *testing.T) {
	h, ep := sseLimited(t)
	// GET /sse and initialize took one each: the bucket holds one more
	// request (burst 3, one a minute).
	for i := range 3 {
		r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":`+strconv.Itoa(2+i)+`,"method":"ping","params":{},"x":"`+"\xff"+`"}`)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(body, "malformed payload") {
			t.Errorf("ping %d with an invalid UTF-8 member: %d %q, want 400 malformed payload", i, r.StatusCode, body)
		}
	}
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":10,"method":"ping"}`); r.StatusCode != http.StatusAccepted {
		t.Errorf("a ping within the limit: %d %q", r.StatusCode, body)
	}
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":11,"method":"ping"}`); r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a ping past the limit: %d %q, want 429", r.StatusCode, body)
	}
}

// sseLimited opens an SSE session, initialized, for one caller whose
// identity bucket holds three requests (one a minute), GET /sse's and the
// initialize's taken: the harness and the session's /messages endpoint.
func sseLimited(t *testing.T) (*limitsHarness, string) {
	t.Helper()
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Gateway.RateLimits.Identity = config.Rate{PerMinute: 1, Burst: 3}
	front := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{})
	// One caller, as the HTTP guard would have authenticated it.
	alice := &authn.Principal{Key: "alice@test"}
	as := func(serve http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			serve(w, r.WithContext(WithPrincipal(r.Context(), alice)))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", as(front.serveSSE))
	mux.HandleFunc("/messages", as(front.serveMessages))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(front.Close)
	h := &limitsHarness{t: t, front: front, url: srv.URL}

	stream, _ := h.stream("/sse", "")
	br := bufio.NewReader(stream.Body)
	var ep string
	for ep == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no endpoint event: %v", err)
		}
		if rest, ok := strings.CutPrefix(line, "data: "); ok {
			ep = strings.TrimSpace(rest)
		}
	}
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialize: %d %s", r.StatusCode, body)
	}
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.StatusCode, body)
	}
	return h, ep
}

// TestSSEMessagesBatchTakesNoTokens (issue 32 review): a batch posted to
// an SSE session's /messages, which go-sdk's transport of 2024-11-05 does
// not serve (one message per POST), is refused before admission and takes
// nothing from the caller's bucket. It used to be counted, then refused
// by go-sdk: a batch of one ping spent the caller's last request.
func TestSSEMessagesBatchTakesNoTokens(t *testing.T) {
	h, ep := sseLimited(t)
	if r, body := h.do(http.MethodPost, ep, "", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a batch: %d %q, want 400", r.StatusCode, body)
	}
	if r, body := h.do(http.MethodPost, ep, "", `{"jsonrpc":"2.0","id":10,"method":"ping"}`); r.StatusCode != http.StatusAccepted {
		t.Errorf("a ping within the limit, after the refused batch: %d %q", r.StatusCode, body)
	}
}

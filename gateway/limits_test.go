package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// postAs POSTs body to front's /mcp as the principal key, with the
// headers hdr, and returns the recorded answer.
func postAs(front *HTTPFront, key, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	p := &authn.Principal{Key: key, Identity: policy.Identity{Auth: "token", Subject: key}}
	w := httptest.NewRecorder()
	front.ServeHTTP(w, req.WithContext(WithPrincipal(req.Context(), p)))
	return w
}

// TestStatelessToolLimitRetryAfter: a 2026-07-28 call over its tool's
// limit is answered 429, and like every other 429 of the gateway it says
// when to come back (Retry-After, whole seconds).
func TestStatelessToolLimitRetryAfter(t *testing.T) {
	g, _ := newGateway(t, func(c *config.Config) {
		c.Gateway.RateLimits.Tools = []config.ToolRate{{Tools: []string{"tb.echo"}, Rate: config.Rate{PerMinute: 1, Burst: 1}}}
	}, testServer("tb"))
	front := g.NewHTTPFront(HTTPOptions{})
	t.Cleanup(front.Close)
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"name":"tb.echo","arguments":{"text":"hi"}}}`
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tb.echo"}
	if w := postAs(front, "alice", call, hdr); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"resultType":"complete"`) {
		t.Fatalf("the first call: %d %.300s", w.Code, w.Body)
	}
	w := postAs(front, "alice", call, hdr)
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), `"code":-32029`) {
		t.Fatalf("the second call: %d %.300s, want 429 -32029", w.Code, w.Body)
	}
	if s, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q, want whole seconds, at least 1", w.Header().Get("Retry-After"))
	}
}

// TestRefusedBatchTakesNoTokens: a POST refused whole — a batch larger
// than what is left of the caller's bucket, a batch with one id twice, a
// batch of the per-request era (which has no batches) — takes nothing from
// the caller's identity bucket: the two requests the bucket holds still
// pass after it.
func TestRefusedBatchTakesNoTokens(t *testing.T) {
	const meta = `"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
	old := map[string]string{"Mcp-Protocol-Version": "2025-03-26"}
	for _, c := range []struct {
		name string
		body string
		hdr  map[string]string
		want int
	}{
		{"over the limit", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, old, http.StatusTooManyRequests},
		{"one id twice", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, old, http.StatusBadRequest},
		{"per-request era", `[{"jsonrpc":"2.0","id":1,"method":"tools/list",` + meta + `},{"jsonrpc":"2.0","id":2,"method":"tools/list",` + meta + `}]`, nil, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Gateway.AnswerTools = false
			cfg.Gateway.RateLimits.Identity = config.Rate{PerMinute: 1, Burst: 2} // no refill within the test
			front := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{Sessionless: true})
			t.Cleanup(front.Close)
			if w := postAs(front, "alice", c.body, c.hdr); w.Code != c.want {
				t.Fatalf("refused POST: %d %.300s, want %d", w.Code, w.Body, c.want)
			}
			for i := range 2 {
				if w := postAs(front, "alice", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, old); w.Code != http.StatusOK {
					t.Fatalf("request %d after the refused POST: %d %.300s, want it served", i+1, w.Code, w.Body)
				}
			}
			if w := postAs(front, "alice", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, old); w.Code != http.StatusTooManyRequests {
				t.Errorf("a third request: %d, want 429 (the bucket holds two)", w.Code)
			}
		})
	}
}

package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPAmbiguousMembersRefused: over HTTP — a Streamable HTTP session
// of the handshake era, a request of 2026-07-28 (whose Mcp-Name
// header matches the exact name), and the 2024-11-05 SSE transport's
// /messages — a tools/call naming tb.echo as "name" and tb's crash as
// "Name" is refused -32602 and runs nothing; testbackend, which decodes
// with Go's encoding/json, would have run crash (restart: never, so every
// later call would fail). An envelope member given twice or in another
// case makes the POST malformed (400), SSE's included.
func TestHTTPAmbiguousMembersRefused(t *testing.T) {
	t.Parallel()
	gw, _ := newGateway(t, nil, testServer("tb"))
	front := gw.NewHTTPFront(HTTPOptions{})
	srv := httptest.NewServer(front)
	defer srv.Close()
	defer front.Close()
	post := func(path string, hdr map[string]string, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
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
	const (
		crash   = `"name":"tb.echo","Name":"crash","arguments":{"code":3}`
		refused = `"code":-32602,"message":"member \"Name\" in params differs from \"name\" only in case`
		meta    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	)
	perRequest := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tb.echo"}

	// The handshake era, in a session.
	init, body := post("/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"members","version":"1"}}}`)
	sid := init.Header.Get(sessionIDHeader)
	if sid == "" {
		t.Fatalf("initialize: %s", body)
	}
	session := map[string]string{sessionIDHeader: sid, "Mcp-Protocol-Version": "2025-11-25"}
	post("/mcp", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if _, body := post("/mcp", session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+crash+`}}`); !strings.Contains(body, refused) {
		t.Errorf("handshake era: %s", body)
	}

	// 2026-07-28, on its own.
	if r, body := post("/mcp", perRequest, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+meta+`,`+crash+`}}`); !strings.Contains(body, refused) {
		t.Errorf("2026-07-28: %d %s", r.StatusCode, body)
	}

	// An envelope member twice makes the POST malformed, in a session and
	// on its own alike.
	if r, body := post("/mcp", perRequest, `{"jsonrpc":"2.0","id":5,"method":"tools/call","Method":"tools/list","params":{`+meta+`,"name":"tb.echo"}}`); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, `member "Method" differs from "method"`) {
		t.Errorf("2026-07-28, Method: %d %s", r.StatusCode, body)
	}
	if r, body := post("/mcp", session, `{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"tb.echo"}}`); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, `member "id" is given more than once`) {
		t.Errorf("handshake era, id twice: %d %s", r.StatusCode, body)
	}

	// SSE: the answer comes on the stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
	get.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse: %v %v", err, stream)
	}
	defer stream.Body.Close()
	events := bufio.NewScanner(stream.Body)
	events.Buffer(nil, 1<<20)
	next := func(want string) string {
		t.Helper()
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok && strings.Contains(data, want) {
				return data
			}
		}
		t.Fatalf("the SSE stream ended before %q: %v", want, events.Err())
		return ""
	}
	endpoint := next("/messages")
	msgs := func(body string) {
		t.Helper()
		if r, b := post(endpoint, nil, body); r.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %d %s", endpoint, r.StatusCode, b)
		}
	}
	msgs(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`)
	next(`"id":"i"`)
	msgs(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msgs(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{` + crash + `}}`)
	if got := next(`"id":"c"`); !strings.Contains(got, refused) {
		t.Errorf("SSE: %s", got)
	}
	if r, body := post(endpoint, nil, `{"jsonrpc":"2.0","id":"e","method":"tools/call","method":"tools/call","params":{`+crash+`}}`); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, "more than once") {
		t.Errorf("SSE, method twice: %d %s", r.StatusCode, body)
	}

	// Nothing crashed tb.
	if r, body := post("/mcp", perRequest, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{`+meta+`,"name":"tb.echo","arguments":{"after":1}}}`); !strings.Contains(body, `"structuredContent":{"after":1}`) {
		t.Errorf("echo after the refused calls: %d %s", r.StatusCode, body)
	}
}

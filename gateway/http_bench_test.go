package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkHTTP2026POST measures the gateway's own work on one POST of
// 2026-07-28 to the HTTP front, in process: a tools/call of a testbackend's
// echo tool as go-sdk's client sends it (its _meta and headers), served on
// its own and answered from the backend, with no network in between, so
// that allocs/op are the front's, the session's and the call path's.
// "traced": with a tracer (a no-op one: what is measured is the gateway's
// reading of the trace context, not a span exporter), and a traceparent
// header, which the front puts into the request's _meta. "large": the
// call's arguments hold a text of 64 KiB, as a client's call with a file in
// it does. "unanswered": the same POSTs to a gateway without backends,
// which answers them itself (-32602, an unknown tool), so that ns/op is
// the gateway's own work with no backend in the loop, and each pass over
// the body shows.
func BenchmarkHTTP2026POST(b *testing.B) {
	post := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},` +
			`"name":"tb.echo","arguments":` + args + `}}`
	}
	small := post(`{"text":"hello","n":12345678901234567890123}`)
	large := post(`{"text":"` + strings.Repeat(`func f() { return \"x\" }\n`, 64<<10/28) + `"}`)
	for _, c := range []struct {
		name               string
		body               string
		traced, unanswered bool
	}{
		{"plain", small, false, false},
		{"traced", small, true, false},
		{"large", large, false, false},
		{"unanswered/small", small, false, true},
		{"unanswered/large", large, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var g *Gateway
			if c.unanswered {
				cfg := config.Defaults()
				cfg.Gateway.AnswerTools = false
				g = New(Options{Config: cfg})
			} else {
				g, _ = newGateway(b, nil, testServer("tb"))
			}
			if c.traced {
				g.opts.Tracer = noop.NewTracerProvider().Tracer("bench")
			}
			front := g.NewHTTPFront(HTTPOptions{})
			b.Cleanup(front.Close)
			call := func() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "tb.echo")
				if c.traced {
					req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				}
				w := httptest.NewRecorder()
				front.ServeHTTP(w, req)
				if c.unanswered {
					if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":-32602`) {
						b.Fatalf("%d %.200s", w.Code, w.Body)
					}
					return
				}
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"resultType":"complete"`) || strings.Contains(w.Body.String(), `"isError":true`) {
					b.Fatalf("%d %.200s", w.Code, w.Body)
				}
			}
			for range 50 { // warm up; the first waits for the backend
				call()
			}
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkHTTP2026POST measures the gateway's own work on one POST of
// 2026-07-28 to the HTTP front, in process: a tools/call of a testbackend's
// echo tool as go-sdk's client sends it (its _meta and headers), served on
// its own and answered from the backend, with no network in between, so
// that allocs/op are the front's, the session's and the call path's. With a
// tracer (a no-op one: what is measured is the gateway's reading of the
// trace context, not a span exporter) the POST carries a traceparent
// header, which the front puts into the request's _meta.
func BenchmarkHTTP2026POST(b *testing.B) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},` +
		`"name":"tb.echo","arguments":{"text":"hello","n":12345678901234567890123}}}`
	for _, traced := range []bool{false, true} {
		name := "plain"
		if traced {
			name = "traced"
		}
		b.Run(name, func(b *testing.B) {
			g, _ := newGateway(b, nil, testServer("tb"))
			if traced {
				g.opts.Tracer = noop.NewTracerProvider().Tracer("bench")
			}
			front := g.NewHTTPFront(HTTPOptions{})
			b.Cleanup(front.Close)
			call := func() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "tb.echo")
				if traced {
					req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				}
				w := httptest.NewRecorder()
				front.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"resultType":"complete"`) || strings.Contains(w.Body.String(), `"isError":true`) {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			for range 50 { // warm up; the first waits for the backend
				call()
			}
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

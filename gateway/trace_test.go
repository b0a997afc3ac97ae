package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpansBoundAndMask: what a client sends reaches a span's name,
// attributes and status bounded (a megabyte id or tool name is not
// exported whole) and a resource URI's secrets masked (?token=…), as the
// gateway shows URLs everywhere else.
func TestSpansBoundAndMask(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	g := New(Options{Config: cfg, Tracer: tp.Tracer("test")})
	front := g.NewHTTPFront(HTTPOptions{Sessionless: true})
	t.Cleanup(front.Close)

	const secret = "s3cr3tVALUE9f8e7d6c5b4a"
	big := strings.Repeat("n", 1<<20)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"` + big + `","method":"tools/call","params":{"name":"` + big + `","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///srv/report.txt?token=` + secret + `"}}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		front.ServeHTTP(httptest.NewRecorder(), req)
	}
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans ended, want 3", len(spans))
	}
	var uri bool
	for _, s := range spans {
		check := func(what, v string) {
			if len(v) > 300 {
				t.Errorf("span %.40q: %s is %d bytes, want it bounded", s.Name(), what, len(v))
			}
			if strings.Contains(v, secret) {
				t.Errorf("span %.40q: %s shows the URI's token: %s", s.Name(), what, v)
			}
		}
		check("the name", s.Name())
		check("the status", s.Status().Description)
		for _, a := range s.Attributes() {
			check(string(a.Key), a.Value.String())
			if a.Key == "mcp.resource.uri" {
				uri = true
				if !strings.HasPrefix(a.Value.AsString(), "file:///srv/report.txt?token=") {
					t.Errorf("mcp.resource.uri = %q, want the URI with its token masked", a.Value.AsString())
				}
			}
		}
	}
	if !uri {
		t.Error("no span carries mcp.resource.uri")
	}
}

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP receiver: it decodes what it is sent with
// the official protobuf definitions and keeps the spans, and the names of
// the metrics.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []gotSpan
	metrics map[string]bool
}

type gotSpan struct {
	service, name     string
	trace, id, parent string // hex
	kind              string
	attrs             map[string]string
}

func (s gotSpan) String() string {
	return fmt.Sprintf("%s %q trace=%s id=%s parent=%s %s", s.service, s.name, s.trace, s.id, s.parent, s.kind)
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	r := &otlpReceiver{metrics: map[string]bool{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var resp proto.Message
		switch req.URL.Path {
		case "/v1/traces":
			var ex coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(raw, &ex); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.addSpans(&ex)
			resp = &coltracepb.ExportTraceServiceResponse{}
		case "/v1/metrics":
			var ex colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(raw, &ex); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.mu.Lock()
			for _, rm := range ex.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						r.metrics[m.Name] = true
					}
				}
			}
			r.mu.Unlock()
			resp = &colmetricpb.ExportMetricsServiceResponse{}
		default:
			http.NotFound(w, req)
			return
		}
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func attrString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return v.String()
}

func (r *otlpReceiver) addSpans(ex *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range ex.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = attrString(a.Value)
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s := gotSpan{service: service, name: sp.Name, trace: hex.EncodeToString(sp.TraceId), id: hex.EncodeToString(sp.SpanId),
					parent: hex.EncodeToString(sp.ParentSpanId), kind: sp.Kind.String(), attrs: map[string]string{}}
				for _, a := range sp.Attributes {
					s.attrs[a.Key] = attrString(a.Value)
				}
				r.spans = append(r.spans, s)
			}
		}
	}
}

// inTrace returns the spans of one trace received so far.
func (r *otlpReceiver) inTrace(traceID string) []gotSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []gotSpan
	for _, s := range r.spans {
		if s.trace == traceID {
			out = append(out, s)
		}
	}
	return out
}

// find returns the span of service named name in spans, if any.
func find(spans []gotSpan, service, name, kind string) (gotSpan, bool) {
	for _, s := range spans {
		if s.service == service && s.name == name && s.kind == kind {
			return s, true
		}
	}
	return gotSpan{}, false
}

// TestTraceClientGatewayBackend (issue 26's acceptance): an OTLP/HTTP
// receiver decoding the official protobuf definitions receives one trace in
// which the client's span (the test's own, sent as a traceparent header),
// the gateway's span of the request, the gateway's span of the backend call
// and the backend's own span (testbackend, which continues the context
// the gateway put in _meta) are parent and child in that order; a
// 2026-07-28 client's trace context in _meta is continued the same way;
// the gateway exports its call metrics too.
func TestTraceClientGatewayBackend(t *testing.T) {
	recv := newOTLPReceiver(t)
	be := tb("tb")
	be.Env = map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}
	g := startHTTP(t, httpConfig(t, nil, be), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=100")

	// The client: the test, with the official SDK, exporting to the same
	// receiver.
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-client"))))
	defer tp.Shutdown(context.Background())
	ctx, client := tp.Tracer("e2e").Start(context.Background(), "client call", trace.WithSpanKind(trace.SpanKindClient))
	hdr := propagation.HeaderCarrier{}
	propagation.TraceContext{}.Inject(ctx, hdr)
	sid := initRaw(t, g)
	resp := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tb.echo","arguments":{"x":1}}}`,
		map[string]string{"traceparent": hdr.Get("traceparent"), "Mcp-Protocol-Version": "2025-11-25"})
	if raw, _ := io.ReadAll(resp.Body); !strings.Contains(string(raw), `"structuredContent":{"x":1}`) {
		t.Fatalf("call: %s", raw)
	}
	client.End()
	traceID := client.SpanContext().TraceID().String()

	var spans []gotSpan
	testutil.WaitFor(t, testutil.DefaultTimeout, "the client's, the gateway's two and the backend's spans", func() bool {
		spans = recv.inTrace(traceID)
		return len(spans) >= 4
	})
	c, ok1 := find(spans, "e2e-client", "client call", "SPAN_KIND_CLIENT")
	gs, ok2 := find(spans, "mcp-gateway", "tools/call tb.echo", "SPAN_KIND_SERVER")
	gc, ok3 := find(spans, "mcp-gateway", "tools/call echo", "SPAN_KIND_CLIENT")
	b, ok4 := find(spans, "testbackend", "tools/call echo", "SPAN_KIND_SERVER")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("spans of the trace: %v", spans)
	}
	if gs.parent != c.id || gc.parent != gs.id || b.parent != gc.id {
		t.Errorf("not one chain client → gateway → backend call → backend: %v", spans)
	}
	for k, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "tb.echo", "mcp_gateway.server": "tb",
		"mcp_gateway.outcome": "ok", "network.transport": "tcp", "jsonrpc.request.id": "7"} {
		if gs.attrs[k] != want {
			t.Errorf("gateway span %s = %q, want %q (%v)", k, gs.attrs[k], want, gs.attrs)
		}
	}
	if gs.attrs["mcp_gateway.response.size"] == "" || gs.attrs["mcp_gateway.response.size"] == "0" || gc.attrs["mcp_gateway.server"] != "tb" {
		t.Errorf("sizes and server: %v %v", gs.attrs, gc.attrs)
	}

	// A client of 2026-07-28 says its trace context in _meta.
	const tid, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"tb.echo","arguments":{"y":2},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c26","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-` + tid + `-` + parent + `-01","tracestate":"v=1"}}}`
	resp = postMCP(t, g.base+"/mcp", "", body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tb.echo"})
	if raw, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`{"y":2}`)) {
		t.Fatalf("2026-07-28 call: %d %s", resp.StatusCode, raw)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the 2026-07-28 call's spans", func() bool {
		spans = recv.inTrace(tid)
		_, ok := find(spans, "testbackend", "tools/call echo", "SPAN_KIND_SERVER")
		_, ok2 := find(spans, "mcp-gateway", "tools/call tb.echo", "SPAN_KIND_SERVER")
		return ok && ok2
	})
	if gs, ok := find(spans, "mcp-gateway", "tools/call tb.echo", "SPAN_KIND_SERVER"); !ok || gs.parent != parent {
		t.Errorf("the 2026-07-28 client's context not continued: %v", spans)
	}

	testutil.WaitFor(t, testutil.DefaultTimeout, "the call metrics", func() bool {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		return recv.metrics["mcp.server.operation.duration"]
	})
}

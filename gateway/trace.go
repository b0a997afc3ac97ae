package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing (docs/teams.md, "Traces"): with Options.Tracer set, every
// request a session serves is a server span, and every request the gateway
// makes of a backend for it a client span under it. A request's span
// continues the client's trace: the W3C trace context in the request's
// _meta (traceparent, tracestate, as MCP 2026-07-28 says), which the HTTP
// front fills in from the POST's headers when the client put it there
// instead. A backend request carries its span's context in its _meta, and
// a remote backend's POST in its headers too (backends/remote.go). Names
// and attributes follow OpenTelemetry's MCP conventions (mcp.method.name,
// gen_ai.tool.name, ...), with the gateway's own under mcp_gateway.*.
// Without a tracer nothing here runs: the call path pays one nil check.

// Trace context members of _meta, and headers of the same names.
const (
	metaTraceparent = "traceparent"
	metaTracestate  = "tracestate"
)

var traceContext = propagation.TraceContext{}

// metaCarrier reads the trace context of a request's _meta.
type metaCarrier struct{ meta json.RawMessage }

func (c metaCarrier) Get(key string) string {
	v, _ := wire.Unquote(wire.Member(c.meta, key))
	return v
}
func (metaCarrier) Set(string, string) {}
func (metaCarrier) Keys() []string     { return []string{metaTraceparent, metaTracestate} }

// spanTextMax bounds each text a span carries from a request (its name,
// ids, tool names, URIs, error messages): what a client sends is exported
// to a collector, and a megabyte id must not become a megabyte attribute.
const spanTextMax = 256

// spanText is s as a span carries it: at most spanTextMax bytes, cut on a
// character boundary and marked with "…" when cut.
func spanText(s string) string {
	if len(s) <= spanTextMax {
		return s
	}
	return wire.Truncate(s, spanTextMax-len("…"), "…")
}

// TelemetryText is spanText for the process's other telemetry (the OTLP
// metrics' attributes), which carry a called tool's name too.
func TelemetryText(s string) string { return spanText(s) }

// spanURI is a resource URI as a span carries it: its secrets (a
// ?token= query, a password) masked, as the gateway shows URLs elsewhere.
func spanURI(uri string) string {
	return spanText(safetext.Mask(uri, config.Masked))
}

// requestSpan starts the span of a client's request m: its parent is the
// trace context in its _meta, else what ctx carries.
func (g *Gateway) requestSpan(ctx context.Context, m *inMsg, transport string) trace.Span {
	ctx = traceContext.Extract(ctx, metaCarrier{m.meta})
	method := spanText(m.Method)
	name := method
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", method),
		attribute.String("jsonrpc.request.id", spanText(string(m.ID))),
		attribute.String("network.transport", transport),
		attribute.Int("mcp_gateway.request.size", len(m.Params)),
	}
	switch m.Method {
	case "tools/call":
		if m.nameOK {
			tool := spanText(m.name)
			name += " " + tool
			attrs = append(attrs, attribute.String("gen_ai.tool.name", tool))
		}
	case "prompts/get":
		if m.nameOK {
			prompt := spanText(m.name)
			name += " " + prompt
			attrs = append(attrs, attribute.String("gen_ai.prompt.name", prompt))
		}
	case "resources/read":
		if m.nameOK {
			attrs = append(attrs, attribute.String("mcp.resource.uri", spanURI(m.name)))
		}
	}
	_, span := g.opts.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return span
}

// endRequestSpan ends a request's span with its outcome: ok, tool_error
// (an isError result) or the error's code.
func endRequestSpan(span trace.Span, result json.RawMessage, e *jsonrpc.Error) {
	endSpan(span, result, e, nil)
}

func endSpan(span trace.Span, result json.RawMessage, e *jsonrpc.Error, err error) {
	size := attribute.Int("mcp_gateway.response.size", len(result))
	switch {
	case e != nil:
		code := strconv.FormatInt(e.Code, 10)
		span.SetAttributes(attribute.String("mcp_gateway.outcome", code), size, attribute.Int64("rpc.jsonrpc.error_code", e.Code), attribute.String("error.type", code))
		span.SetStatus(codes.Error, spanMessage(e.Message))
	case err != nil:
		span.SetAttributes(attribute.String("mcp_gateway.outcome", "error"), size, attribute.String("error.type", "error"))
		span.SetStatus(codes.Error, spanMessage(err.Error()))
	case bytes.Contains(result, []byte(`"isError":true`)):
		span.SetAttributes(attribute.String("mcp_gateway.outcome", "tool_error"), size, attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, "the tool's result is an error")
	default:
		span.SetAttributes(attribute.String("mcp_gateway.outcome", "ok"), size)
	}
	span.End()
}

// spanMessage is an error's message as a span's status carries it: it
// may quote what the client sent (a name not found), so it is bounded and
// its secrets masked.
func spanMessage(msg string) string {
	return spanText(safetext.Mask(msg, config.Masked))
}

// backendSpan starts the span of a request the gateway makes of a backend
// for the request whose span parent holds (none: a trace of its own), and
// returns the _meta members that carry its context to the backend.
func (g *Gateway) backendSpan(parent context.Context, method, server, own string) (trace.Span, map[string]any) {
	if parent == nil {
		parent = context.Background()
	}
	name := method
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", method),
		attribute.String("mcp_gateway.server", server),
	}
	if own != "" {
		own = spanText(own)
		name += " " + own
		if method == "tools/call" {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", own))
		}
	}
	_, span := g.opts.Tracer.Start(parent, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return span, traceMeta(span.SpanContext())
}

// traceMeta is the _meta members that carry a span's context (W3C trace
// context), written directly rather than through a propagator's carrier:
// this runs for every backend call.
func traceMeta(sc trace.SpanContext) map[string]any {
	var buf [55]byte
	copy(buf[:], "00-")
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(buf[3:35], tid[:])
	buf[35] = '-'
	hex.Encode(buf[36:52], sid[:])
	buf[52] = '-'
	hex.Encode(buf[53:55], []byte{byte(sc.TraceFlags())})
	meta := map[string]any{metaTraceparent: string(buf[:])}
	if ts := sc.TraceState(); ts.Len() > 0 {
		meta[metaTracestate] = ts.String()
	}
	return meta
}

// withTraceMeta adds a backend span's context to the _meta of a backend
// request's options.
func withTraceMeta(m map[string]any, trace map[string]any) map[string]any {
	if m == nil {
		return trace
	}
	for k, v := range trace {
		m[k] = v
	}
	return m
}

// traceHeaders puts the trace context of a POST's headers into the _meta
// of each of its requests that carries none of its own, so that the
// session continues the client's trace whatever the client put it in; it
// reports whether it changed any. It runs only with a tracer.
func traceHeaders(h http.Header, msgs []inMsg) (changed bool) {
	tp := h.Get(metaTraceparent)
	if tp == "" {
		return false
	}
	ts := h.Get(metaTracestate)
	for i := range msgs {
		m := &msgs[i]
		if !m.IsCall() || m.ambiguous != nil {
			// An ambiguous request is refused by the session: a rewrite
			// would only hide what made it so.
			continue
		}
		meta := m.meta
		if wire.Member(meta, metaTraceparent) != nil {
			continue
		}
		if len(bytes.TrimSpace(meta)) == 0 || string(meta) == "null" {
			meta = json.RawMessage(`{}`)
		}
		q, _ := json.Marshal(tp)
		meta, err := wire.SetMember(meta, metaTraceparent, q)
		if err == nil && ts != "" {
			q, _ = json.Marshal(ts)
			meta, err = wire.SetMember(meta, metaTracestate, q)
		}
		params := m.Params
		if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
			params = json.RawMessage(`{}`)
		}
		if err == nil {
			params, err = wire.SetMember(params, "_meta", meta)
		}
		if err != nil {
			continue // not an object: the session answers it
		}
		m.setMeta(params, meta)
		changed = true
	}
	return changed
}

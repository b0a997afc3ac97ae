package main

import (
	"context"
	"encoding/json"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing, when OTEL_EXPORTER_OTLP_ENDPOINT is set: each tools/call whose
// _meta carries a W3C trace context is a server span of the service
// "testbackend" under it, exported over OTLP/HTTP as it ends. It makes the
// test double a backend that takes part in the gateway's traces.

// newTracer returns the tracer, or nil when tracing is off.
func newTracer() trace.Tracer {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return nil
	}
	exp, err := otlptracehttp.New(context.Background())
	if err != nil {
		return nil
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "testbackend"))))
	return tp.Tracer("testbackend")
}

// metaCarrier reads a request's _meta as a trace context carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string { s, _ := m[k].(string); return s }
func (metaCarrier) Set(string, string)    {}
func (metaCarrier) Keys() []string        { return []string{"traceparent", "tracestate"} }

// span starts the span of a call of tool with _meta meta, if it carries a
// trace context; the returned func ends it.
func (s *server) span(tool string, meta json.RawMessage) func() {
	if s.tracer == nil {
		return func() {}
	}
	var m map[string]any
	if json.Unmarshal(meta, &m) != nil || m["traceparent"] == nil {
		return func() {}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), metaCarrier(m))
	_, sp := s.tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer))
	return func() { sp.End() }
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is OpenTelemetry over OTLP/HTTP (docs/teams.md, "Traces"),
// configured by the standard OTEL_* environment variables and off unless
// they ask for it: traces when OTEL_TRACES_EXPORTER is otlp, or is unset
// and an OTLP endpoint is (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); metrics the same way. The
// exporters, sampler, batching and resource read their own variables
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, ...)
// as the SDK documents them. Only the http/protobuf protocol is built in.
type telemetry struct {
	tp       *sdktrace.TracerProvider // nil: no traces
	mp       *sdkmetric.MeterProvider // nil: no metrics
	duration metric.Float64Histogram
	limited  metric.Int64Counter
	denials  metric.Int64Counter
}

const instrumentation = "github.com/mcp-gateway/mcp-gateway"

// newTelemetry sets up what the environment asks for; nil when nothing.
func newTelemetry(ctx context.Context, lookup func(string) (string, bool), log *slog.Logger) (*telemetry, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	traces, err := otlpWanted(get, "TRACES")
	if err != nil {
		return nil, err
	}
	metrics, err := otlpWanted(get, "METRICS")
	if err != nil || !traces && !metrics {
		return nil, err
	}
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", "mcp-gateway"),
		attribute.String("service.version", version())), resource.Environment())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	t := &telemetry{}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry traces: %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry metrics: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		m := t.mp.Meter(instrumentation)
		// OpenTelemetry's MCP conventions name the operation's duration.
		t.duration, _ = m.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
			metric.WithDescription("Tool calls served, by tool, backend server and outcome."))
		t.limited, _ = m.Int64Counter("mcp_gateway.rate_limited", metric.WithDescription("Requests a rate limit refused."))
		t.denials, _ = m.Int64Counter("mcp_gateway.policy.denials", metric.WithDescription("Requests the per-identity policy refused."))
	}
	log.Info("OpenTelemetry on", "traces", traces, "metrics", metrics, "endpoint", otlpEndpoint(get))
	return t, nil
}

// otlpWanted reads OTEL_<SIGNAL>_EXPORTER and the protocol of a signal.
func otlpWanted(get func(string) string, signal string) (bool, error) {
	exporter := get("OTEL_" + signal + "_EXPORTER")
	switch exporter {
	case "":
		if get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
			return false, nil
		}
	case "otlp":
	case "none":
		return false, nil
	default:
		return false, usagef("OTEL_%s_EXPORTER=%s is not supported: mcp-gateway exports otlp (or none)", signal, exporter)
	}
	proto := get("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return false, usagef("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported: mcp-gateway exports OTLP over http/protobuf", proto)
	}
	return true, nil
}

func otlpEndpoint(get func(string) string) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if v := get(k); v != "" {
			return v
		}
	}
	return "http://localhost:4318 (the default)"
}

// tracer is the gateway's tracer, nil without traces.
func (t *telemetry) tracer() trace.Tracer {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp.Tracer(instrumentation)
}

// observe records one tool call (gateway.Options.OnCall).
func (t *telemetry) observe(c gateway.CallRecord) {
	if t.duration == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", gateway.TelemetryText(c.Tool)),
		attribute.String("mcp_gateway.server", c.Server)}
	if c.Outcome != "ok" {
		attrs = append(attrs, attribute.String("error.type", c.Outcome))
	}
	t.duration.Record(context.Background(), c.Duration.Seconds(), metric.WithAttributes(attrs...))
}

func (t *telemetry) rateLimited(limit, server string) {
	if t.limited != nil {
		t.limited.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", limit), attribute.String("mcp_gateway.server", server)))
	}
}

func (t *telemetry) denied(kind string) {
	if t.denials != nil {
		t.denials.Add(context.Background(), 1, metric.WithAttributes(attribute.String("kind", kind)))
	}
}

// shutdown exports what is still buffered, within a few seconds.
func (t *telemetry) shutdown() error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

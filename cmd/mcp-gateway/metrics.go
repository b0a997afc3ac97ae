package main

import (
	"context"
	"net/http"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// metrics is the HTTP front's Prometheus registry: one per gateway, never
// the library's global one (docs/http.md#metrics).
type metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	denials  *prometheus.CounterVec
	limited  *prometheus.CounterVec
}

func newMetrics(m *backends.Manager) *metrics {
	reg := prometheus.NewRegistry()
	x := &metrics{
		reg: reg,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_gateway_tool_calls_total",
			Help: "Tool calls, by backend server (\"\" for the gateway's own tools) and outcome.",
		}, []string{"server", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_gateway_tool_call_duration_seconds",
			Help:    "Tool call latency, by backend server and outcome.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server", "outcome"}),
	}
	x.denials = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_gateway_policy_denials_total",
		Help: "Requests the per-identity policy refused, by what was asked for (tool, prompt, resource).",
	}, []string{"kind"})
	x.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_gateway_rate_limited_total",
		Help: "Requests a rate limit refused, by limit (identity, tool) and backend server (\"\" for the identity limit).",
	}, []string{"limit", "server"})
	reg.MustRegister(x.calls, x.duration, x.denials, x.limited, backendCollector{m})
	return x
}

// observe records one tool call (gateway.Options.OnCall).
func (x *metrics) observe(c gateway.CallRecord) {
	x.calls.WithLabelValues(c.Server, c.Outcome).Inc()
	x.duration.WithLabelValues(c.Server, c.Outcome).Observe(c.Duration.Seconds())
}

// handler serves the registry to a caller; a series labelled with a
// server that sees(the request's context, server) denies is left out, so
// that a caller learns of no server its policy hides (the gateway-wide
// series, server "", are everyone's).
func (x *metrics) handler(sees func(context.Context, string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			mfs, err := x.reg.Gather()
			for _, mf := range mfs {
				mf.Metric = slices.DeleteFunc(mf.Metric, func(m *dto.Metric) bool {
					for _, l := range m.GetLabel() {
						if l.GetName() == "server" && l.GetValue() != "" && !sees(r.Context(), l.GetValue()) {
							return true
						}
					}
					return false
				})
			}
			// A family with no series left cannot be written.
			mfs = slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return len(mf.Metric) == 0 })
			return mfs, err
		})
		promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
}

// backendCollector reports the backends' states and restarts as they are at
// each scrape.
type backendCollector struct{ m *backends.Manager }

var (
	stateDesc = prometheus.NewDesc("mcp_gateway_backend_state",
		"1 for the state each backend server is in.", []string{"server", "state"}, nil)
	restartsDesc = prometheus.NewDesc("mcp_gateway_backend_restarts_total",
		"Restarts of each backend server.", []string{"server"}, nil)
	toolsDesc = prometheus.NewDesc("mcp_gateway_backend_tools",
		"Tools each backend server lists.", []string{"server"}, nil)
)

func (c backendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- restartsDesc
	ch <- toolsDesc
}

func (c backendCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.m.Status() {
		ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, 1, s.Name, string(s.State))
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(s.Restarts), s.Name)
		ch <- prometheus.MustNewConstMetric(toolsDesc, prometheus.GaugeValue, float64(s.Tools), s.Name)
	}
}

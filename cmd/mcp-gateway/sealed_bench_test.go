package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPSealedSession measures a request of a 2025-11-25 session
// whose id is sealed (gateway.http.state_key_env) against the same
// request of an in-memory session (no key), in the same run: go-sdk's
// client calling a testbackend's echo tool through the same in-process
// round-robin reverse proxy. "sealed-1" is one replica with a key (the
// issuer serves every request); "sealed-2" two replicas, so that half of
// the requests are served by the replica that did not issue the session,
// from its copy — and each process, and its backend, sees every other
// request only. The target (issue 36): p50 sealed/memory ≤ 1.05; the
// gateway's own cost of a copy, without the processes in between, is
// BenchmarkSealedSessionPOST (gateway).
func BenchmarkHTTPSealedSession(b *testing.B) {
	keyed := func(name string) *httpGW {
		return startHTTPEnv(b, benchConfigWith(b, "http: {state_key_env: MCP_GATEWAY_STATE_KEY, replica: "+name+"}", 1), baseEnv(b, "MCP_GATEWAY_STATE_KEY=bench-key"))
	}
	connect := func(gws ...*httpGW) *mcp.ClientSession {
		proxy := roundRobin(b, gws)
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: proxy + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	paths := []*mcp.ClientSession{
		connect(startHTTPEnv(b, benchConfig(b, 1), baseEnv(b))),
		connect(keyed("one")),
		connect(keyed("r0"), keyed("r1")),
	}
	for _, cs := range paths[1:] {
		if !strings.Contains(cs.ID(), ".s1") {
			b.Fatalf("a sealed path's session id %q", cs.ID())
		}
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(benchEchoArgs), &args); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(i int) {
		res, err := paths[i].CallTool(ctx, &mcp.CallToolParams{Name: "tb0.echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("path %d: %v %v", i, err, res)
		}
	}
	for i := range paths {
		for range 300 { // warm up; the first calls wait for the backends
			call(i)
		}
	}
	lat := benchAlternate(b, len(paths), call)
	p50 := make([]float64, len(paths))
	for i, name := range []string{"memory", "sealed-1", "sealed-2"} {
		p50[i] = float64(benchPercentile(lat[i], 0.50))
		b.ReportMetric(p50[i]/1e3, name+"-p50-µs")
	}
	b.ReportMetric(p50[1]/p50[0], "p50-sealed-1/memory")
	b.ReportMetric(p50[2]/p50[0], "p50-sealed-2/memory")
}

// roundRobin serves a reverse proxy that sends each request to the next of
// gws, and returns its URL.
func roundRobin(b *testing.B, gws []*httpGW) string {
	var targets []*url.URL
	for _, g := range gws {
		u, err := url.Parse(g.base)
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, u)
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[next.Add(1)%uint64(len(targets))])
		},
		FlushInterval: -1, // event streams as they come
	}
	srv := httptest.NewServer(proxy)
	b.Cleanup(srv.Close)
	return srv.URL
}

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
// client calling a testbackend's echo tool, each path through an
// in-process round-robin reverse proxy. Two topologies:
//
//   - one replica: "memory-1" without a key, "sealed-1" with one (the
//     issuer serves every request);
//   - two replicas taking turns: "sealed-2", one session whose requests
//     alternate between two keyed replicas (half of them served by the
//     replica that did not issue it, from its copy), and "memory-2", its
//     in-memory counterpart: two sessions, one on each of two replicas
//     without a key, the requests alternating between them — the same
//     processes and backends taking turns, without sealing.
//
// The target (issue 36): p50 sealed/memory ≤ 1.05 in each topology. The
// gateway's own cost of a copy, without the processes in between, is
// BenchmarkSealedSessionPOST (gateway).
func BenchmarkHTTPSealedSession(b *testing.B) {
	plain := func() *httpGW { return startHTTPEnv(b, benchConfig(b, 1), baseEnv(b)) }
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
	// Each path is the sessions its calls take turns on.
	paths := [][]*mcp.ClientSession{
		{connect(plain())},
		{connect(keyed("one"))},
		{connect(plain()), connect(plain())},
		{connect(keyed("r0"), keyed("r1"))},
	}
	names := []string{"memory-1", "sealed-1", "memory-2", "sealed-2"}
	for _, i := range []int{1, 3} {
		if id := paths[i][0].ID(); !strings.Contains(id, ".s1") {
			b.Fatalf("%s: session id %q", names[i], id)
		}
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(benchEchoArgs), &args); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	turns := make([]int, len(paths))
	call := func(i int) {
		turns[i]++
		cs := paths[i][turns[i]%len(paths[i])]
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb0.echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", names[i], err, res)
		}
	}
	for i := range paths {
		for range 300 { // warm up; the first calls wait for the backends
			call(i)
		}
	}
	lat := benchAlternate(b, len(paths), call)
	p50 := make([]float64, len(paths))
	for i, name := range names {
		p50[i] = float64(benchPercentile(lat[i], 0.50))
		b.ReportMetric(p50[i]/1e3, name+"-p50-µs")
	}
	b.ReportMetric(p50[1]/p50[0], "p50-sealed-1/memory-1")
	b.ReportMetric(p50[3]/p50[2], "p50-sealed-2/memory-2")
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPToolsCall measures tools/call of an echo tool over the HTTP
// front (Streamable HTTP, to a testbackend on stdio) against a go-sdk
// Streamable HTTP server serving the same tool directly, both driven by
// go-sdk's Streamable HTTP client, in the same run. One op is one call on
// each path; the paths alternate in batches. The target
// (docs/benchmarks.md): gateway p50 ≤ 1.5× the direct server's.
func BenchmarkHTTPToolsCall(b *testing.B) {
	call := httpEchoPaths(b, "2025-11-25", false)
	b.Run("sequential", func(b *testing.B) { reportDirectVsGateway(b, call) })

	b.Run("inflight32", func(b *testing.B) {
		const inflight = 32
		var rate [2]float64
		for i := range rate {
			start := time.Now()
			var wg sync.WaitGroup
			per := max(1, b.N/inflight)
			for range inflight {
				wg.Go(func() {
					for range per {
						call(i)
					}
				})
			}
			wg.Wait()
			rate[i] = float64(per*inflight) / time.Since(start).Seconds()
		}
		b.ReportMetric(rate[0], "direct-calls/s")
		b.ReportMetric(rate[1], "gw-calls/s")
		b.ReportMetric(rate[1]/rate[0], "tput-gw/direct")
	})
}

// BenchmarkHTTP2026ToolsCall is BenchmarkHTTPToolsCall for clients of
// 2026-07-28: go-sdk's client speaking that revision (no handshake, each
// call a POST of its own with its _meta and headers) to go-sdk's
// stateless Streamable HTTP server directly, and to the gateway's HTTP
// front (whose backend, a testbackend on stdio, it speaks 2025-11-25 to),
// in the same run. The target (docs/benchmarks.md): gateway p50 ≤ 1.2×
// the direct server's.
func BenchmarkHTTP2026ToolsCall(b *testing.B) {
	reportDirectVsGateway(b, httpEchoPaths(b, "2026-07-28", true))
}

// httpEchoPaths serves an echo tool from go-sdk's Streamable HTTP server
// directly (stateless if asked) and from a gateway whose one testbackend
// has it, connects a go-sdk client speaking version to each, warms both up,
// and returns the call on path i: 0 direct, 1 the gateway.
func httpEchoPaths(b *testing.B, version string, stateless bool) func(i int) {
	direct := mcp.NewServer(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	direct.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(args)}}, StructuredContent: args}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return direct }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	b.Cleanup(srv.Close) // after the client sessions' cleanups (LIFO)
	gw := startHTTPEnv(b, benchConfig(b, 1), baseEnv(b))
	connect := func(url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			b.Fatal(err)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != version {
			b.Fatalf("%s speaks %s", url, v)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(benchEchoArgs), &args); err != nil {
		b.Fatal(err)
	}
	paths := []struct {
		name string
		cs   *mcp.ClientSession
		tool string
	}{
		{"direct", connect(srv.URL), "echo"},
		{"gw", connect(gw.base + "/mcp"), "tb0.echo"},
	}
	ctx := context.Background()
	call := func(i int) {
		res, err := paths[i].cs.CallTool(ctx, &mcp.CallToolParams{Name: paths[i].tool, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", paths[i].name, err, res)
		}
	}
	for i := range paths {
		for range 300 { // warm up
			call(i)
		}
	}
	return call
}

// reportDirectVsGateway times calls on the two paths of httpEchoPaths,
// alternating, and reports their p50 and p99 and the ratio of the p50s.
func reportDirectVsGateway(b *testing.B, call func(int)) {
	lat := benchAlternate(b, 2, call)
	d50, d99 := benchPercentile(lat[0], 0.50), benchPercentile(lat[0], 0.99)
	g50, g99 := benchPercentile(lat[1], 0.50), benchPercentile(lat[1], 0.99)
	b.ReportMetric(benchMicros(d50), "direct-p50-µs")
	b.ReportMetric(benchMicros(d99), "direct-p99-µs")
	b.ReportMetric(benchMicros(g50), "gw-p50-µs")
	b.ReportMetric(benchMicros(g99), "gw-p99-µs")
	b.ReportMetric(float64(g50)/float64(d50), "p50-gw/direct")
}

// BenchmarkHTTPStatelessToolsCall measures one stateless Streamable HTTP
// tools/call (a plain POST, as a serverless client sends it) through
// gateways whose one testbackend has few or many tools, in the same run,
// in full and in lazy mode (where the call goes through gateway.call_tool).
// A stateless request is a session of its own, so the ratio "many/few" is
// what a session's tables cost per request.
func BenchmarkHTTPStatelessToolsCall(b *testing.B) {
	for _, mode := range []string{"full", "lazy"} {
		b.Run(mode, func(b *testing.B) {
			start := func(extra int) *httpGW {
				cfg := fmt.Sprintf("gateway: {startup_timeout_ms: 20000, first_start_wait_ms: 20000, answer_tools: false, tools_mode: %s, http: {stateless: true}}\n"+
					"servers:\n  - {name: tb0, command: %q, args: [-extra-tools, %d]}\n", mode, backendBin, extra)
				return startHTTPEnv(b, testutil.TempFile(b, "config.yaml", cfg), baseEnv(b))
			}
			paths := []struct {
				name string
				gw   *httpGW
			}{{"few", start(0)}, {"many", start(2000)}}
			params := `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`
			if mode == "lazy" {
				params = `{"name":"gateway.call_tool","arguments":` + params + `}`
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
			hc := &http.Client{}
			call := func(i int) {
				req, _ := http.NewRequest(http.MethodPost, paths[i].gw.base+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"result"`) || strings.Contains(string(out), `"isError":true`) {
					b.Fatalf("%s: %s %s", paths[i].name, resp.Status, out)
				}
			}
			for i := range paths {
				for range 50 { // warm up; the first waits for the backend
					call(i)
				}
			}
			lat := benchAlternate(b, len(paths), call)
			f50, m50 := benchPercentile(lat[0], 0.50), benchPercentile(lat[1], 0.50)
			b.ReportMetric(benchMicros(f50), "few-p50-µs")
			b.ReportMetric(benchMicros(m50), "many-p50-µs")
			b.ReportMetric(float64(m50)/float64(f50), "p50-many/few")
		})
	}
}

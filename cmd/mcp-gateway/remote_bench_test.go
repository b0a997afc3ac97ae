package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// BenchmarkRemoteToolsCall measures what a remote backend costs, in the same
// run: a tools/call of the echo tool through the gateway to a local
// testbackend (local), through the gateway to the same kind of testbackend
// behind a second gateway serving Streamable HTTP (remote: the gateway's
// remote transport, then the second gateway), and the second gateway called
// directly over Streamable HTTP by go-sdk's client (http-direct: the floor
// of the remote path without the first gateway). The paths alternate in
// batches, so machine noise lands on all alike.
func BenchmarkRemoteToolsCall(b *testing.B) {
	back := startHTTPEnv(b, httpConfig(b, nil, tb("tb")), baseEnv(b))
	front := startBenchGateway(b, beConfig(b, tb("local"), beServer{Name: "far", URL: back.base + "/mcp"}))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: back.base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var args map[string]any
	_ = json.Unmarshal([]byte(benchEchoArgs), &args)

	calls := []struct {
		name string
		call func() error
	}{
		{"local", func() error {
			return benchCheck(front.call("tools/call", `{"name":"local.echo","arguments":`+benchEchoArgs+`}`))
		}},
		{"remote", func() error {
			return benchCheck(front.call("tools/call", `{"name":"far.tb.echo","arguments":`+benchEchoArgs+`}`))
		}},
		{"http-direct", func() error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.echo", Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("isError")
			}
			return err
		}},
	}
	for _, c := range calls { // the remote's tools may still be on their way
		var err error
		if !testutil.Poll(testutil.DefaultTimeout, func() bool { err = c.call(); return err == nil }) {
			b.Fatalf("%s: %v", c.name, err)
		}
		for range 200 {
			if err := c.call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	lat := benchAlternate(b, len(calls), func(i int) {
		if err := calls[i].call(); err != nil {
			b.Fatal(err)
		}
	})
	p50 := func(i int) time.Duration { return benchPercentile(lat[i], 0.50) }
	b.ReportMetric(benchMicros(p50(0)), "local-p50-µs")
	b.ReportMetric(benchMicros(p50(1)), "remote-p50-µs")
	b.ReportMetric(benchMicros(benchPercentile(lat[1], 0.99)), "remote-p99-µs")
	b.ReportMetric(benchMicros(p50(2)), "http-direct-p50-µs")
	b.ReportMetric(benchMicros(benchPercentile(lat[2], 0.99)), "http-direct-p99-µs")
	b.ReportMetric(float64(p50(1))/float64(p50(0)), "p50-remote/local")
	b.ReportMetric(float64(p50(1))/float64(p50(2)), "p50-remote/http-direct")
}

// benchCheck turns a raw response into an error unless it is a result.
func benchCheck(line []byte, err error) error {
	if err == nil && !bytes.Contains(line, []byte(`"result"`)) {
		err = fmt.Errorf("no result: %s", line)
	}
	return err
}

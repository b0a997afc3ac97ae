//go:build linux

package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// BenchmarkSandboxToolsCall is BenchmarkToolsCall's sequential round trip
// with the backend confined (docs/sandbox.md): the echo tool through a
// gateway whose backend runs under enforce with network none, through the
// same gateway unconfined, and through the relay (the floor of an extra
// hop), in the same run. A confined server speaks on the same pipes, so
// the bar is p50 unchanged within noise: at most 1.2× the relay.
// Run without -race:
//
//	go test ./cmd/mcp-gateway/ -run '^$' -bench SandboxToolsCall -count 5
func BenchmarkSandboxToolsCall(b *testing.B) {
	if backends.LandlockABI() == 0 {
		b.Skip("the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs): nothing to confine with")
	}
	relay := startBenchBackend(b, "-relay", "--", backendBin, "-hostile")
	gw := startBenchGateway(b, benchConfig(b, 1, "-hostile"))
	cfg := benchConfigWith(b, "sandbox: {mode: enforce, network: none}", 1, "-hostile")
	boxed := startBenchGateway(b, cfg)
	tools, err := relay.listTools() // the backend's own, through the relay
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []*benchClient{gw, boxed} {
		if n, err := c.listTools(); err != nil || n != tools {
			b.Fatalf("gateway tools/list: %d tools, %v; the backend lists %d", n, err, tools)
		}
	}
	// The confined backend is confined: its read of the gateway's config,
	// which no sandbox grants, is refused by the OS.
	line, err := boxed.call("tools/call", fmt.Sprintf(`{"name":"tb0.read_file","arguments":{"path":%q}}`, cfg))
	if err != nil || !bytes.Contains(line, []byte("permission denied")) {
		b.Fatalf("the confined backend read the config: %v %s", err, line)
	}

	const iRelay, iGW, iBoxed = 0, 1, 2
	paths := [3]struct {
		name   string
		c      *benchClient
		params string
	}{
		iRelay: {"relay", relay, `{"name":"echo","arguments":` + benchEchoArgs + `}`},
		iGW:    {"gw", gw, `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`},
		iBoxed: {"gw-sandbox", boxed, `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`},
	}
	for _, p := range paths {
		warmEcho(b, p.name, p.c, p.params)
	}
	// One op is one call on each path, alternating in batches.
	lat := benchAlternate(b, len(paths), func(pi int) {
		if _, err := paths[pi].c.call("tools/call", paths[pi].params); err != nil {
			b.Fatal(err)
		}
	})
	r50, g50, s50 := benchPercentile(lat[iRelay], 0.50), benchPercentile(lat[iGW], 0.50), benchPercentile(lat[iBoxed], 0.50)
	b.ReportMetric(benchMicros(r50), "relay-p50-µs")
	b.ReportMetric(benchMicros(g50), "gw-p50-µs")
	b.ReportMetric(benchMicros(s50), "sandbox-p50-µs")
	b.ReportMetric(benchMicros(benchPercentile(lat[iBoxed], 0.99)), "sandbox-p99-µs")
	b.ReportMetric(float64(g50)/float64(r50), "p50-gw/relay")
	b.ReportMetric(float64(s50)/float64(r50), "p50-sandbox/relay")
	b.ReportMetric(float64(s50)/float64(g50), "p50-sandbox/gw")
}

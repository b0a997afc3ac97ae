package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// coldWarmBackends and coldWarmDelay are BenchmarkColdWarmStart's backends:
// ten testbackends that each take 2 s to start.
const (
	coldWarmBackends = 10
	coldWarmDelay    = "2s"
)

// BenchmarkColdWarmStart measures the time from starting the process until
// tools/list holds every tool of 10 backends that each take 2 s to start:
// the gateway cold (no snapshot: the first list comes after
// first_start_wait_ms without them, and the rest with list_changed) and
// warm (their snapshots from an earlier run), against the same 10 backends
// started and listed directly, in parallel, in the same run. The entries
// are the same in every run; the delay reaches the backends through the
// environment (TESTBACKEND_START_DELAY, inherit_env), so the warm run's
// snapshots match.
//
//	go test ./cmd/mcp-gateway/ -run '^$' -bench ColdWarmStart -benchtime 5x -count 3
func BenchmarkColdWarmStart(b *testing.B) {
	var cfg strings.Builder
	cfg.WriteString("gateway: { answer_tools: false }\nservers:\n")
	for i := range coldWarmBackends {
		fmt.Fprintf(&cfg, "  - { name: tb%d, command: %q, inherit_env: true }\n", i, backendBin)
	}
	path := testutil.TempFile(b, "config.yaml", cfg.String())
	want := coldWarmBackends * benchBackendTools
	delay := "TESTBACKEND_START_DELAY=" + coldWarmDelay

	warmHome, _ := snapshotHome(b)
	if out, errOut, code := runCLIEnv(b, homeEnv(b, warmHome), "status", "--config", path); code != 0 {
		b.Fatalf("status (snapshots): exit %d\n%s\n%s", code, out, errOut)
	}

	gateway := func(home string) (time.Duration, error) {
		t0 := time.Now()
		c := benchStart(b, homeEnv(b, home, delay), gatewayBin, "--stdio", "--config", path)
		defer c.stop()
		if err := c.handshake(); err != nil {
			return 0, err
		}
		for {
			// Marked before the list: a list_changed sent between its
			// answer and a later mark would be missed.
			mark := c.Mark()
			n, err := c.listTools()
			if err != nil || n == want {
				return time.Since(t0), err
			}
			// Incomplete (cold): the rest arrives with list_changed.
			if !testutil.Poll(30*time.Second, func() bool { return len(c.Since(mark, "notifications/tools/list_changed")) > 0 }) {
				return 0, fmt.Errorf("tools/list: %d tools, want %d, and no list_changed (stderr: %s)", n, want, c.stderr)
			}
		}
	}
	variants := []struct {
		name string
		run  func() (time.Duration, error)
	}{
		{"direct", func() (time.Duration, error) {
			t0 := time.Now()
			env := baseEnv(b, delay)
			var wg sync.WaitGroup
			errs := make([]error, coldWarmBackends)
			for i := range coldWarmBackends {
				wg.Go(func() {
					c := benchStart(b, env, backendBin)
					defer c.stop()
					if errs[i] = c.handshake(); errs[i] == nil {
						var n int
						if n, errs[i] = c.listTools(); errs[i] == nil && n != benchBackendTools {
							errs[i] = fmt.Errorf("direct tools/list: %d tools", n)
						}
					}
				})
			}
			wg.Wait()
			d := time.Since(t0)
			for _, err := range errs {
				if err != nil {
					return 0, err
				}
			}
			return d, nil
		}},
		{"cold", func() (time.Duration, error) { home, _ := snapshotHome(b); return gateway(home) }},
		{"warm", func() (time.Duration, error) { return gateway(warmHome) }},
	}
	times := make([][]time.Duration, len(variants))
	b.ResetTimer()
	for i := range b.N {
		for k := range variants {
			vi := (k + i) % len(variants)
			d, err := variants[vi].run()
			if err != nil {
				b.Fatalf("%s: %v", variants[vi].name, err)
			}
			times[vi] = append(times[vi], d)
		}
	}
	b.StopTimer()
	med := make([]time.Duration, len(variants))
	for k, v := range variants {
		med[k] = benchPercentile(times[k], 0.5)
		b.ReportMetric(benchMillis(med[k]), v.name+"-ms")
	}
	b.ReportMetric(float64(med[0])/float64(med[2]), "direct/warm")
	b.ReportMetric(float64(med[1])/float64(med[0]), "cold/direct")
}

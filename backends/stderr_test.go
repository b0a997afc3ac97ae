package backends

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
)

// floodLines is a child's stderr flood: n lines, each with a secret a name
// shows and one of a known shape.
func floodLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "2026-01-02T03:04:05Z DEBUG request %d password=hunter%d token ghp_1234567890abcdefghijABCDEFGHIJ123456\n", i, i)
	}
	return b.String()
}

// TestStderrFloodMasksOnlyLoggedLines: the rate limiter decides before a
// line is masked, so of a flood only the lines logged are masked as they
// are read; the tail's dropped lines are masked when it is shown, and
// nothing shown holds a secret.
func TestStderrFloodMasksOnlyLoggedLines(t *testing.T) {
	const lines, burst = 5000, 10
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	lim := ratelimit.New(ratelimit.Options{Rate: 1e-9, Burst: burst}) // no refill while the test runs
	var tl tail
	masked := 0
	drainStderrWith(strings.NewReader(floodLines(lines)), log, &tl, lim, func(s string) string {
		masked++
		return maskLine(s)
	})
	if masked != burst {
		t.Errorf("%d of %d lines masked while draining, want the %d logged", masked, lines, burst)
	}
	if n := strings.Count(out.String(), "stream=stderr"); n != burst {
		t.Errorf("%d lines logged, want %d", n, burst)
	}
	flushLogLimit(lim, log)
	if !strings.Contains(out.String(), fmt.Sprintf("dropped=%d", lines-burst)) {
		t.Errorf("no count of the dropped lines:\n%s", out.String())
	}
	snap := tl.snapshot()
	if len(snap) != stderrTailLines || !strings.Contains(snap[stderrTailLines-1], fmt.Sprintf("request %d ", lines-1)) {
		t.Fatalf("tail %q", snap)
	}
	for _, s := range append(snap, strings.Split(out.String(), "\n")...) {
		if strings.Contains(s, "hunter") || strings.Contains(s, "ghp_") {
			t.Errorf("a secret shown: %q", s)
		}
	}
	if again := tl.snapshot(); strings.Join(again, "\n") != strings.Join(snap, "\n") {
		t.Errorf("second snapshot differs: %q", again)
	}
}

// BenchmarkStderrFlood is the cost per line of a child flooding stderr
// with lines the log limit (logLimit) mostly drops.
func BenchmarkStderrFlood(b *testing.B) {
	const lines = 20000
	flood := floodLines(lines)
	log := slog.New(slog.DiscardHandler)
	b.SetBytes(int64(len(flood)))
	for b.Loop() {
		var tl tail
		drainStderr(strings.NewReader(flood), log, &tl, ratelimit.New(logLimit))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/lines, "ns/line")
}

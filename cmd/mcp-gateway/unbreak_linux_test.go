//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// procStatusKB returns a field of /proc/PID/status in KiB (VmRSS, VmHWM).
func procStatusKB(t *testing.T, pid int, field string) int {
	t.Helper()
	st, err := testutil.StatusKB(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return int(st[field])
}

// A backend that sends 300,000 pings and then reads nothing for a while: the
// gateway answers them without a goroutine each and keeps at most 1 MiB of
// replies waiting, so its peak memory stays flat (the finding: 1.8 GB).
func TestBackendPingFloodBoundedMemory(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	gw := s.Cmd.Process.Pid
	before := procStatusKB(t, gw, "VmHWM")
	r := s.callTool("tb.deaf", `{"ms":1000,"flood":300000}`)
	if r.Map()["result"] == nil {
		t.Fatalf("deaf: %s", r)
	}
	// Answered only once the backend reads again, and after the gateway has
	// read the whole flood (the backend's stdout is in order).
	if r := s.Await(s.Request("tools/call", `{"name":"tb.echo","arguments":{"after":"flood"}}`), 60*time.Second); r.Map()["result"] == nil {
		t.Fatalf("echo after the flood: %s", r)
	}
	peak := procStatusKB(t, gw, "VmHWM")
	t.Logf("gateway peak RSS: %d KiB before the flood, %d KiB after 300,000 pings", before, peak)
	if peak-before > 32<<10 {
		t.Errorf("peak RSS grew by %d KiB under the ping flood, want < 32 MiB", peak-before)
	}
	if !strings.Contains(s.Stderr.String(), "dropping replies") {
		t.Errorf("no warning about dropped replies:\n%s", lastLines(s.Stderr.String(), 5))
	}
}

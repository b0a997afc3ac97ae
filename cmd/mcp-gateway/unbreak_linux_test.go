//go:build linux

package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
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

// A backend that floods progress for a call while the client reads
// slowly: the gateway keeps only the latest progress per token instead of
// queueing them all, so its peak memory stays flat, the client gets far
// fewer than were sent, the last one before the result is the final step,
// and the result still comes after every progress of its call.
func TestProgressFloodCoalescedForSlowClient(t *testing.T) {
	t.Parallel()
	steps := 1_000_000
	if testutil.Race {
		steps = 100_000
	}
	// The flood takes as long as the machine makes it (minutes with both
	// cores busy): the call's timeout must not end it first.
	flooder := tb("tb")
	flooder.TimeoutMS = 3600_000
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, flooder))
	p.send(initMsg + "\n" + initializedMsg + "\n")
	p.readLine()
	gw := p.Cmd.Process.Pid
	before := procStatusKB(t, gw, "VmHWM")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":%d,"ms":0},"_meta":{"progressToken":"flood"}}}`+"\n", steps))
	var got int
	var last string
	p.Slow(true) // a client slower than the backend
	for {
		m := p.Next() // each waits for the next message, up to the client's timeout
		if m.Method() == "notifications/progress" {
			got++
			last = m.String()
			continue
		}
		if m.ID() == "7" {
			if !strings.Contains(m.String(), `"result"`) {
				t.Fatalf("the call failed: %s", m)
			}
			break
		}
	}
	p.Slow(false)
	peak := procStatusKB(t, gw, "VmHWM")
	t.Logf("%d progress notifications sent, %d received; gateway peak RSS %d KiB before, %d KiB after", steps, got, before, peak)
	if !strings.Contains(last, fmt.Sprintf(`"progress":%d,`, steps)) {
		t.Errorf("last progress before the result = %s, want step %d", last, steps)
	}
	if got > steps/4 {
		t.Errorf("%d of %d progress notifications reached a slow client, want them coalesced", got, steps)
	}
	if peak-before > 32<<10 {
		t.Errorf("peak RSS grew by %d KiB under the progress flood, want < 32 MiB", peak-before)
	}
}

// A 50 MiB tool result goes through the gateway in bounded memory: the
// gateway's peak RSS grows by well under three times the result's size (it
// grew by four to five times; docs/benchmarks.md, "Large results"), and the
// memory is handed back to the OS afterwards.
func TestLargeResultBoundedMemory(t *testing.T) {
	t.Parallel()
	const size = 50 << 20
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	gw := s.Cmd.Process.Pid
	if r := s.callTool("tb.echo", `{"warm":"up"}`); r.Map()["result"] == nil {
		t.Fatalf("echo: %s", r)
	}
	base := procStatusKB(t, gw, "VmRSS")
	r := s.Await(s.Request("tools/call", `{"name":"tb.big","arguments":{"bytes":`+strconv.Itoa(size)+`}}`), 60*time.Second)
	peak := procStatusKB(t, gw, "VmHWM")
	content, _ := r.Result(t)["content"].([]any)
	if len(content) != 1 || len(content[0].(map[string]any)["text"].(string)) != size {
		t.Fatalf("result is not the %d-byte text: %.200s", size, r.Raw)
	}
	// The memory is handed back once the backend's read loop is done with
	// the line, which may be just after the client has the response.
	var after int
	testutil.Poll(10*time.Second, func() bool {
		after = procStatusKB(t, gw, "VmRSS")
		return after-base <= size>>10/4
	})
	ratio := float64(peak-base) / float64(size>>10)
	t.Logf("gateway RSS %d KiB before, peak %d KiB with a %d MiB result (%.2fx its size over the RSS before), %d KiB after",
		base, peak, size>>20, ratio, after)
	if testutil.Race {
		return // the race detector's shadow memory is part of the RSS
	}
	if ratio > 2.5 {
		t.Errorf("peak RSS grew by %.2fx the result's size, want under 2.5x", ratio)
	}
	if after-base > size>>10/4 {
		t.Errorf("RSS %d KiB after the result, %d KiB before: not handed back", after, base)
	}
}

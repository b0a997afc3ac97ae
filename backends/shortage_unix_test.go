//go:build unix

package backends_test

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestStartShortageNotACrash: a backend that cannot be started because
// the gateway has no file descriptor left (pipe2: EMFILE) is retried, and
// those failures are not its crashes: far more of them than the crash
// limit never make it "gave up after 5 crashes", and once descriptors are
// back it starts. It runs in a child process of the test binary, whose
// descriptors it exhausts (below a lowered limit).
func TestStartShortageNotACrash(t *testing.T) {
	t.Parallel()
	if !testutil.InChild(t, "BACKENDS_SHORTAGE_CHILD") {
		return
	}
	release := testutil.ExhaustFiles(t)

	s := srv("tb")
	s.Restart = "on-failure"
	e := start(t, []config.Server{s}, nil)
	// Backoff 10 ms, 5 crashes within a minute give up: 20 failed starts
	// are four times the limit.
	testutil.WaitFor(t, testutil.DefaultTimeout, "20 starts that failed for want of descriptors", func() bool {
		return len(e.log.Find("restarting backend", "too many open files", "not counted as a crash")) >= 20
	})
	st := e.status(t, "tb")
	if st.State == backends.Failed || len(e.log.Find("gave up")) > 0 {
		t.Fatalf("the gateway's own shortage counted as the backend's crashes: %s %s", st.State, st.Error)
	}
	release()
	e.waitState(t, "tb", backends.Ready)
	if got := string(e.call(t, "tb", "echo", `{"n":1}`)); !strings.Contains(got, `"n":1`) {
		t.Errorf("echo after the shortage: %s", got)
	}
}

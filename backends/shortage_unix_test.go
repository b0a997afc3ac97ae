//go:build unix

package backends_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// TestStartShortageNotACrash: a backend that cannot be started because
// the gateway has no file descriptor left (pipe2: EMFILE) is retried, and
// those failures are not its crashes: far more of them than the crash
// limit never make it "gave up after 5 crashes", and once descriptors are
// back it starts. It runs in a child process of the test binary, whose
// descriptors it exhausts (below a lowered limit).
func TestStartShortageNotACrash(t *testing.T) {
	if os.Getenv("BACKENDS_SHORTAGE_CHILD") == "" {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartShortageNotACrash$", "-test.v")
		cmd.Env = append(os.Environ(), "BACKENDS_SHORTAGE_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestStartShortageNotACrash") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	release := func() {
		for _, f := range held {
			f.Close()
		}
		held = nil
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	defer release()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}

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

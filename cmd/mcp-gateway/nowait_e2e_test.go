package main

// End-to-end tests of "never in the way" (docs/configuration.md, "Startup"):
// a call never waits on a backend it does not concern, and a slow start
// still comes up.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestCallDoesNotWaitForOtherBackends: with one fast backend and one that
// takes 8 s to start, initialize waits for the slow one only as long as
// first_start_wait_ms (it carries the backends' capabilities and
// instructions), and a call to the fast one is answered then, while the
// slow one is still starting.
func TestCallDoesNotWaitForOtherBackends(t *testing.T) {
	t.Parallel()
	cfg := testutil.TempFile(t, "config.yaml", fmt.Sprintf(`{
  "gateway": {"first_start_wait_ms": 1500, "answer_tools": false},
  "servers": [
    {"name": "fast", "command": %[1]q, "args": ["-instructions", "fast"]},
    {"name": "slow", "command": %[1]q, "args": ["-start-delay", "1h", "-instructions", "slow"]}
  ]
}`, backendBin))
	// The slow backend starts for an hour: a call answered at all did not
	// wait for it.
	s, init := initSession(t, startGateway(t, baseEnv(t), "--stdio", "--config", cfg), "e2e", `{}`)
	if got := init.Result(t)["instructions"]; got != "## fast\n\nfast" {
		t.Errorf("instructions %q: want the fast backend's only", got)
	}
	if sc := s.structured("fast.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("fast.echo = %v", sc)
	}
	wantTools(t, s.toolsList(), "fast.echo")
}

// TestSlowStartComesUpLater: a backend slower than first_start_wait_ms is
// not killed: tools/list answers without it, `status --wait` shows it
// starting with the elapsed time, and when it is ready its tools appear
// with notifications/tools/list_changed.
func TestSlowStartComesUpLater(t *testing.T) {
	t.Parallel()
	cfg := testutil.TempFile(t, "config.yaml", fmt.Sprintf(`{
  "gateway": {"first_start_wait_ms": 1000, "answer_tools": false},
  "servers": [
    {"name": "fast", "command": %[1]q},
    {"name": "slow", "command": %[1]q, "args": ["-start-delay", "6s"]}
  ]
}`, backendBin))

	out, errOut, code := runCLI(t, "status", "--wait", "1s", "--config", cfg)
	if !regexp.MustCompile(`(?m)^slow\s+starting \(\d+(\.\d+)?s\)`).MatchString(out) || code != 0 {
		t.Errorf("status (exit %d) does not show slow as starting with the elapsed time:\n%s\nstderr:\n%s", code, out, errOut)
	}

	s := startRaw(t, cfg, "e2e")
	names := s.toolsList()
	wantTools(t, names, "fast.echo")
	wantNoTools(t, names, "slow.echo")
	mark := s.Mark()
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	wantTools(t, s.toolsList(), "fast.echo", "slow.echo")
	if sc := s.structured("slow.echo", `{"late":true}`); sc["late"] != true {
		t.Errorf("slow.echo = %v", sc)
	}
}

// TestFailedStartRetried: under restart: on-failure (the default) a backend
// whose start fails is retried with the crash backoff (1 s, then 2 s, ...).
func TestFailedStartRetried(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("ok"), tb("broken", "-fail-start", "7")), "e2e")
	wantTools(t, s.toolsList(), "ok.echo")
	testutil.WaitFor(t, testutil.DefaultTimeout, "the failed start retried twice", func() bool {
		return strings.Count(s.Stderr.String(), "restarting backend") >= 2
	})
	if !strings.Contains(s.Stderr.String(), "server=broken in=2s") {
		t.Errorf("the second retry does not back off to 2 s:\n%s", s.Stderr)
	}
}

package main

// End-to-end tests of "never in the way" (docs/configuration.md, "Startup"):
// a call never waits on a backend it does not concern, and a slow start
// still comes up.

import (
	"testing"
	"time"
)

// TestCallDoesNotWaitForOtherBackends: with one fast backend and one that
// takes 8 s to start, a call to the fast one right after initialize is
// answered while the slow one is still starting; tools/list then waits for
// the slow one (within startup_timeout_ms) and lists both.
func TestCallDoesNotWaitForOtherBackends(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("fast"), tb("slow", "-start-delay", "8s"))
	t0 := time.Now()
	s := startRaw(t, cfg, "e2e")
	if sc := s.structured("fast.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("fast.echo = %v", sc)
	}
	d := time.Since(t0)
	t.Logf("initialize + call to the fast backend: %s", d)
	if d > 4*time.Second {
		t.Errorf("a call to the ready backend took %s: it waited for the slow one (8 s)", d)
	}
	names := s.toolsList()
	if time.Since(t0) < 7*time.Second {
		t.Errorf("tools/list answered after %s, before the slow backend was up", time.Since(t0))
	}
	wantTools(t, names, "fast.echo", "slow.echo")
}

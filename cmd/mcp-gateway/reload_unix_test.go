//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"
)

// TestSIGHUPReloads: SIGHUP reloads the configuration (and does not end
// the gateway); an untouched server is not restarted.
func TestSIGHUPReloads(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	wantTools(t, s.toolsList(), "tb.echo")
	s.Cmd.Process.Signal(syscall.SIGHUP)
	waitStderr(t, s, "trigger=SIGHUP")
	if sc := s.structured("tb.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("tb.echo after SIGHUP = %v", sc)
	}
	for _, want := range []string{"configuration reloaded", "added=[]", "removed=[]", "restarted=[]"} {
		if got := s.Stderr.String(); !strings.Contains(got, want) {
			t.Errorf("no %q in the reload log:\n%s", want, got)
		}
	}
}

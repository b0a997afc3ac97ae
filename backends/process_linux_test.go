//go:build linux

package backends_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// Process-group checks read /proc; the process machinery itself is tested on
// every Unix in backends/internal/proc.

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("g", "-grandchild"), srv("stubborn", "-ignore-term", "-grandchild")}, nil)
	pg := e.status(t, "g").PID
	ps := e.status(t, "stubborn").PID
	gpid := grandchildPID(t, e, "g")
	if pids, _ := groupMembers(pg); !slices.Contains(pids, gpid) || !slices.Contains(pids, pg) {
		t.Fatalf("group %d: %v (grandchild %d)", pg, pids, gpid)
	}
	inflight := make(chan error, 1)
	go func() {
		_, err := e.CallTool(context.Background(), "g", "hang", nil, backends.CallOptions{})
		inflight <- err
	}()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the call at the backend", func() bool { return backends.InFlight(e.Manager, "g") > 0 })
	t0 := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %s (stop grace 200ms; one backend ignores stdin EOF and SIGTERM)", time.Since(t0))
	var se *backends.ServerError
	if err := <-inflight; !errors.As(err, &se) || se.State != backends.Stopped {
		t.Errorf("in-flight call: %v", err)
	}
	for _, pgid := range []int{pg, ps} {
		if pids, zombie := groupMembers(pgid); len(pids) > 0 || zombie {
			t.Errorf("group %d left: %v (zombie %v)", pgid, pids, zombie)
		}
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children: %v", z)
	}
	for _, s := range e.Status() {
		if s.State != backends.Stopped || s.PID != 0 {
			t.Errorf("after Close: %+v", s)
		}
	}
	if len(e.Tools()) != 0 {
		t.Error("tools after Close")
	}
	_, err := e.CallTool(context.Background(), "g", "echo", nil, backends.CallOptions{})
	if !errors.As(err, &se) || se.State != backends.Stopped {
		t.Errorf("call after Close: %v", err)
	}
	if err := e.Close(); err != nil { // idempotent
		t.Error(err)
	}
}

// groupMembers lists the live pids in process group pgid, and whether a
// zombie of ours is in it. (An orphaned grandchild's zombie belongs to
// whoever adopted it, pid 1 or a subreaper; it is not counted.)
func groupMembers(pgid int) (pids []int, zombie bool) {
	for _, p := range testutil.Procs() {
		switch {
		case p.PGID != pgid:
		case p.State == 'Z':
			zombie = zombie || p.PPID == os.Getpid()
		default:
			pids = append(pids, p.PID)
		}
	}
	return pids, zombie
}

// zombieChildren returns the test process's children that stay zombies
// for a second: a child of a parallel test that just exited is a zombie
// for the moment its supervisor takes to reap it, an unreaped one forever.
func zombieChildren() []int {
	var z []int
	testutil.Poll(time.Second, func() bool {
		z = z[:0]
		for _, p := range testutil.Procs() {
			if p.PPID == os.Getpid() && p.State == 'Z' {
				z = append(z, p.PID)
			}
		}
		return len(z) == 0
	})
	return z
}

// grandchildPID waits for "grandchild pid N" in a server's stderr tail. The
// backend writes it before it answers initialize, but stderr is read on its
// own: Ready does not mean the line has been read yet.
func grandchildPID(t *testing.T, e *env, name string) int {
	t.Helper()
	pid := 0
	testutil.WaitFor(t, testutil.DefaultTimeout, "the grandchild pid on "+name+"'s stderr", func() bool {
		for _, l := range e.status(t, name).StderrTail {
			if n, ok := strings.CutPrefix(l, "grandchild pid "); ok {
				pid, _ = strconv.Atoi(n)
				return true
			}
		}
		return false
	})
	return pid
}

// TestApplyRemovedTreeGone: a backend that a new configuration removes is
// stopped with its whole process group, grandchild included, and reaped.
func TestApplyRemovedTreeGone(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("keep"), srv("gone", "-grandchild")}, nil)
	pg := e.status(t, "gone").PID
	gpid := grandchildPID(t, e, "gone")
	e.Apply([]config.Server{srv("keep")})
	if pids, zombie := groupMembers(pg); len(pids) > 0 || zombie {
		t.Errorf("group %d of the removed backend left: %v (zombie %v; grandchild %d)", pg, pids, zombie, gpid)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children: %v", z)
	}
}

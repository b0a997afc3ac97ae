//go:build linux

package main

// Process trees as /proc shows them: what the gateway leaves behind when it
// stops or is killed. The same guarantees on macOS and Windows are tested
// in backends/internal/proc.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// findDescendant returns the descendant of root whose command line contains
// what.
func findDescendant(t *testing.T, root int, what string) testutil.Proc {
	t.Helper()
	for _, p := range testutil.Descendants(root) {
		if strings.Contains(p.Cmdline, what) {
			return p
		}
	}
	t.Fatalf("no process %q below %d: %v", what, root, testutil.Descendants(root))
	return testutil.Proc{}
}

// killLeftovers SIGKILLs whatever of procs is still alive (cleanup after a
// failed assertion) and reaps those that became our children.
func killLeftovers(procs []testutil.Proc) {
	for _, p := range procs {
		if p.Alive() {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	testutil.Poll(time.Second, func() bool { return !slices.ContainsFunc(procs, testutil.Proc.Alive) })
	reapOurs(procs)
}

// reapOurs reaps the processes of procs that were re-parented to the test
// process (it is a child subreaper, see becomeSubreaper) and are zombies.
func reapOurs(procs []testutil.Proc) {
	for _, p := range procs {
		if q, ok := testutil.ReadProc(p.PID); ok && q.Start == p.Start && q.PPID == os.Getpid() && q.State == 'Z' {
			var ws syscall.WaitStatus
			syscall.Wait4(p.PID, &ws, syscall.WNOHANG, nil)
		}
	}
}

var subreaperOnce sync.Once

// becomeSubreaper makes the test process the child subreaper of everything
// it starts: an orphan is re-parented here instead of to init. A child of
// the gateway that the gateway never reaped then shows up as our zombie
// once the gateway is gone, which is how "no zombie" is checked.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	var err error
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
			err = e
		}
	})
	if err != nil {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
}

// shutdownTree starts a gateway whose backends have grandchildren (one of
// them ignores SIGTERM and stdin EOF), records the process tree, stops the
// gateway with stop, and checks that nothing is left: no process alive, and
// no child of the gateway left unreaped.
func shutdownTree(t *testing.T, stop func(p *proc)) {
	becomeSubreaper(t)
	s := startRaw(t, beConfig(t,
		tb("gc", "-grandchild"),
		tb("stubborn", "-grandchild", "-ignore-term"),
		tb("plain"),
	), "e2e")
	wantTools(t, s.toolsList(), "gc.echo", "stubborn.echo", "plain.echo")
	gw := s.Cmd.Process.Pid
	tree := testutil.Descendants(gw)
	t.Cleanup(func() { killLeftovers(tree) })
	var sleeps, direct int
	for _, p := range tree {
		if strings.HasPrefix(p.Cmdline, "sleep") {
			sleeps++
		}
		if p.PPID == gw {
			direct++
		}
	}
	if sleeps != 2 || direct < 3 {
		t.Fatalf("process tree below the gateway: %v", tree)
	}
	stop(s)
	if err := s.Exited(t, 20*time.Second); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Errorf("gateway exit: %v", err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, "no process left", func() bool {
		for _, p := range tree {
			if p.Alive() {
				return false
			}
		}
		return true
	})
	for _, p := range tree {
		if p.PPID == gw && p.Exists() {
			t.Errorf("child %v of the gateway was not reaped", p)
		}
	}
	reapOurs(tree)
}

// stdin EOF: the gateway closes each child's stdin, then SIGTERMs and
// SIGKILLs the groups; nothing is left and every child was reaped.
func TestShutdownOnStdinEOF(t *testing.T) {
	t.Parallel()
	shutdownTree(t, func(p *proc) { p.Stdin.Close() })
}

func TestShutdownOnSIGTERM(t *testing.T) {
	t.Parallel()
	shutdownTree(t, func(p *proc) { p.Cmd.Process.Signal(syscall.SIGTERM) })
}

// childGoneCheck finds the descendant of root whose command line contains
// what and returns a check that it no longer exists (reaped, not a zombie).
func childGoneCheck(t *testing.T, root int, what string) func() bool {
	child := findDescendant(t, root, what)
	return func() bool { return !child.Exists() }
}

// kill -9 of the gateway leaves no process behind: the reaper SIGKILLs every
// backend's process group — npx's sh and node grandchildren, and
// testbackend's "sleep 300", included.
func TestKillNineLeavesNoProcess(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	mem := beServer{Name: "memory", Command: "npx", Args: []string{"--no-install", "mcp-server-memory"}, Cwd: root,
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}
	s := startRaw(t, beConfig(t,
		mem,
		nodeServer(root, "everything", "server-everything", "stdio"),
		tb("tb", "-grandchild"),
	), "e2e")
	wantTools(t, s.toolsList(), "memory.read_graph", "everything.echo", "tb.echo")
	gw := s.Cmd.Process.Pid
	tree := testutil.Descendants(gw)
	t.Cleanup(func() { killLeftovers(tree) })
	for _, want := range []string{reaperArg, "sleep 300", "mcp-server-memory", "server-everything", backendBin} {
		if !slices.ContainsFunc(tree, func(p testutil.Proc) bool { return strings.Contains(p.Cmdline, want) }) {
			t.Errorf("no %q below the gateway: %v", want, tree)
		}
	}
	var deep int // grandchildren and below
	for _, p := range tree {
		if p.PPID != gw {
			deep++
		}
	}
	if deep < 3 { // npx's sh and node, testbackend's sleep
		t.Errorf("want grandchildren below the gateway: %v", tree)
	}

	if err := s.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.Exited(t, 10*time.Second)
	testutil.WaitFor(t, 10*time.Second, "no process alive after kill -9 of the gateway", func() bool {
		return !slices.ContainsFunc(tree, testutil.Proc.Alive)
	})
	reapOurs(tree)
}

// A backend's grandchild that left the process group (setsid) and holds the
// backend's stdout and stderr: the gateway still stops in bounded time, on
// stdin EOF and on SIGTERM, and the escapee is found (by its pipes) and
// killed instead of surviving re-parented to init.
func TestShutdownWithEscapedGrandchild(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			becomeSubreaper(t)
			s := startRaw(t, beConfig(t, tb("esc", "-escape"), tb("plain")), "e2e")
			wantTools(t, s.toolsList(), "esc.echo", "plain.echo")
			gw := s.Cmd.Process.Pid
			tree := testutil.Descendants(gw)
			t.Cleanup(func() { killLeftovers(tree) })
			esc := findDescendant(t, gw, "sleep 300")
			if how == "eof" {
				s.Stdin.Close()
			} else {
				s.Cmd.Process.Signal(syscall.SIGTERM)
			}
			// It exits without waiting for the escapee (sleep 300).
			s.Exited(t, testutil.DefaultTimeout)
			testutil.WaitFor(t, testutil.DefaultTimeout, "escapee gone", func() bool { return !esc.Alive() })
			reapOurs(tree)
		})
	}
}

//go:build linux

package backends_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// Process-group checks read /proc; the process machinery itself is tested on
// every Unix in backends/internal/proc.

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("g", "-grandchild"), srv("stubborn", "-ignore-term", "-grandchild")}, nil)
	pg := e.status(t, "g").PID
	ps := e.status(t, "stubborn").PID
	gpid := grandchildPID(t, e.status(t, "g"))
	if pids, _ := groupMembers(pg); !slices.Contains(pids, gpid) || !slices.Contains(pids, pg) {
		t.Fatalf("group %d: %v (grandchild %d)", pg, pids, gpid)
	}
	inflight := make(chan error, 1)
	go func() {
		_, err := e.CallTool(context.Background(), "g", "hang", nil, backends.CallOptions{})
		inflight <- err
	}()
	time.Sleep(20 * time.Millisecond)
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

// TestReaperOnGatewaySIGKILL runs the test binary as a gateway with a
// backend that has a grandchild, SIGKILLs it, and checks that the backend's
// whole process group dies (Pdeathsig alone would leave the grandchild).
func TestReaperOnGatewaySIGKILL(t *testing.T) {
	t.Parallel()
	gw := exec.Command(os.Args[0], "-test.run=^$")
	gw.Env = append(os.Environ(), "BACKENDS_TEST_GATEWAY=-grandchild", "BACKENDS_TEST_BACKEND="+testbackend)
	gw.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	gw.Stderr = os.Stderr
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	line := readLine(t, bufio.NewReader(out), 10*time.Second)
	var pid int
	if _, err := fmt.Sscanf(line, "pid %d", &pid); err != nil {
		gw.Process.Kill()
		gw.Wait()
		t.Fatalf("gateway said %q", line)
	}
	if pids, _ := groupMembers(pid); len(pids) < 2 {
		t.Errorf("backend group %d: %v, want the backend and its grandchild", pid, pids)
	}
	gw.Process.Kill()
	gw.Wait()
	waitGone(t, pid, 3*time.Second)
}

// groupMembers lists the live pids in process group pgid, and whether a
// zombie of ours is in it. (An orphaned grandchild's zombie belongs to
// whoever adopted it, pid 1 or a subreaper; it is not counted.)
func groupMembers(pgid int) (pids []int, zombie bool) {
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.pgrp != pgid {
			continue
		}
		if st.state == "Z" {
			zombie = zombie || st.ppid == os.Getpid()
			continue
		}
		pids = append(pids, pid)
	}
	return pids, zombie
}

type procStat struct {
	state      string
	ppid, pgrp int
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("bad stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return procStat{}, fmt.Errorf("bad stat")
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{state: f[0], ppid: ppid, pgrp: pgrp}, nil
}

// zombieChildren returns the test process's children that stay zombies
// for a second: a child of a parallel test that just exited is a zombie
// for the moment its supervisor takes to reap it, an unreaped one forever.
func zombieChildren() []int {
	deadline := time.Now().Add(time.Second)
	for {
		z := zombiesNow()
		if len(z) == 0 || time.Now().After(deadline) {
			return z
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func zombiesNow() []int {
	var out []int
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil && st.ppid == me && st.state == "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// waitGone polls until no process is left in group pgid.
func waitGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		pids, _ := groupMembers(pgid)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has %v", pgid, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// grandchildPID finds "grandchild pid N" in a server's stderr tail.
func grandchildPID(t *testing.T, s backends.Status) int {
	t.Helper()
	for _, l := range s.StderrTail {
		if n, ok := strings.CutPrefix(l, "grandchild pid "); ok {
			pid, _ := strconv.Atoi(n)
			return pid
		}
	}
	t.Fatalf("no grandchild pid in %q", s.StderrTail)
	return 0
}

// readLine reads one line from r with a timeout.
func readLine(t *testing.T, r *bufio.Reader, within time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := r.ReadString('\n')
		ch <- strings.TrimSpace(l)
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(within):
		t.Fatal("timed out reading a line")
		return ""
	}
}

// TestApplyRemovedTreeGone: a backend that a new configuration removes is
// stopped with its whole process group, grandchild included, and reaped.
func TestApplyRemovedTreeGone(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("keep"), srv("gone", "-grandchild")}, nil)
	pg := e.status(t, "gone").PID
	gpid := grandchildPID(t, e.status(t, "gone"))
	e.Apply([]config.Server{srv("keep")})
	if pids, zombie := groupMembers(pg); len(pids) > 0 || zombie {
		t.Errorf("group %d of the removed backend left: %v (zombie %v; grandchild %d)", pg, pids, zombie, gpid)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children: %v", z)
	}
}

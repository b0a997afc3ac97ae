//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// group is the child's process group (pgid == the child's pid).
type group struct {
	pgid   int
	leader *os.Process
}

// command resolves name the usual way: exec.LookPath on the gateway's PATH,
// and a relative path with a slash relative to dir (os/exec does that).
func command(name string, args []string, _ string) (*exec.Cmd, error) {
	return exec.Command(name, args...), nil
}

// start starts cmd as the leader of a new process group (with s.NetNS,
// in a new network namespace where the OS has them).
func start(cmd *exec.Cmd, s Spec) (group, error) {
	cmd.SysProcAttr = sysProcAttr(s.NetNS, s.UserNS)
	if err := cmd.Start(); err != nil {
		return group{}, err
	}
	return group{pgid: cmd.Process.Pid, leader: cmd.Process}, nil
}

// signal sends sig to the whole process group.
func (g group) signal(sig syscall.Signal) {
	if err := syscall.Kill(-g.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = g.leader.Signal(sig) // fall back to the direct child
	}
}

// empty reports whether no process is left in the group.
func (g group) empty() bool {
	// A member that ended after its parent (npx's node under its sh) is
	// the gateway's zombie when it is the subreaper, and holds the group
	// until reaped: Stop would wait out its grace, twice, for nothing.
	reapAdopted(g.pgid)
	return errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}

// terminate sends SIGTERM to the group and, unless wait reports it gone,
// SIGKILL.
func (g group) terminate(wait func() bool) {
	g.signal(syscall.SIGTERM)
	if !wait() {
		g.signal(syscall.SIGKILL)
	}
}

// kill sends SIGKILL to the group.
func (g group) kill() { g.signal(syscall.SIGKILL) }

// memoryLimitHit is false: no memory limit is applied here.
func (g group) memoryLimitHit() bool { return false }

// close has nothing to release on Unix.
func (g group) close() {}

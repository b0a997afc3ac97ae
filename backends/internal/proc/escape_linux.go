package proc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process the child subreaper of its
// descendants (prctl PR_SET_CHILD_SUBREAPER): a process whose parent dies is
// re-parented to the gateway instead of to init, so a backend's grandchild
// that left its process group (setsid) can still be found (EndOrphans) and
// is ours to reap.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// pipeInodes records the inodes of the child's three pipes, by which
// KillEscaped finds the processes that still hold them. It goes through
// SyscallConn, not Fd: Fd puts the descriptor in blocking mode, and every
// read of the backend's stdout would then block a thread instead of
// waiting in the netpoller (a context switch more per read).
func pipeInodes(files ...*os.File) []uint64 {
	var out []uint64
	for _, f := range files {
		rc, err := f.SyscallConn()
		if err != nil {
			continue
		}
		var st unix.Stat_t
		var serr error
		if rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }) == nil && serr == nil {
			out = append(out, st.Ino)
		}
	}
	return out
}

// KillEscaped SIGKILLs every process other than the gateway that still holds
// one of the child's pipes — a descendant that left the child's process
// group (setsid) and so outlived the group kill — together with its own
// process group when it leads one, and reaps those that were re-parented
// to the gateway (BecomeSubreaper). It returns how many it killed. Call it
// after Stop or Kill, when the child's readers did not reach EOF.
func (p *Process) KillEscaped() int {
	if len(p.pipes) == 0 {
		return 0
	}
	want := make(map[string]bool, len(p.pipes))
	for _, ino := range p.pipes {
		want["pipe:["+strconv.FormatUint(ino, 10)+"]"] = true
	}
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var killed []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if holdsAny(pid, want) {
			killed = append(killed, pid)
			if pg, err := unix.Getpgid(pid); err == nil && pg == pid {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, pid := range killed {
		reapOrphan(pid)
	}
	return len(killed)
}

// holdsAny reports whether pid has a file descriptor open on one of want
// ("pipe:[INODE]").
func holdsAny(pid int, want map[string]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false // gone, or not ours to inspect
	}
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && want[l] {
			return true
		}
	}
	return false
}

// reapOrphan waits for pid if it is the gateway's child — an orphan it
// adopted as subreaper, never one of its own backends, which os/exec
// reaps. Anything else is left alone.
func reapOrphan(pid int) {
	if parent(pid) != os.Getpid() {
		return
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// parent returns pid's parent pid, or 0.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// EndOrphans SIGKILLs and reaps every child of the gateway other than keep:
// once every backend has been stopped and reaped, a remaining child is an
// orphan the gateway adopted as subreaper (a backend's descendant that
// escaped its group and closed its pipes). Only for a process that called
// BecomeSubreaper and starts no children of its own meanwhile. It returns
// how many were still running: a zombie — a descendant that ended with its
// group's stop after its parent did, so was adopted only to be reaped (npx's
// node under its sh) — is reaped and not counted.
func EndOrphans(keep ...int) int {
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || parent(pid) != self || slices.Contains(keep, pid) {
			continue
		}
		if zombie(pid) {
			reapOrphan(pid)
			continue
		}
		if pg, err := unix.Getpgid(pid); err == nil && pg == pid {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		reapOrphan(pid)
		n++
	}
	return n
}

// zombie reports whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}

// reapAdopted reaps the zombies of process group pgid that the gateway
// adopted as subreaper. Only members other than the leader are candidates
// — the gateway's own children are group leaders, which os/exec reaps — so
// without BecomeSubreaper there are none.
func reapAdopted(pgid int) {
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid || parent(pid) != self || !zombie(pid) {
			continue
		}
		if pg, err := unix.Getpgid(pid); err == nil && pg == pgid {
			reapOrphan(pid)
		}
	}
}

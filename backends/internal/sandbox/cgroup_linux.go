package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// FindCgroups finds where this gateway may make its servers' cgroups
// (the package doc, docs/sandbox.md), and removes the empty ones that
// gateways no longer running left behind there.
func FindCgroups() *Cgroups {
	c := &Cgroups{}
	self, err1 := os.ReadFile("/proc/self/cgroup")
	mounts, err2 := os.ReadFile("/proc/self/mountinfo")
	stat, err3 := os.ReadFile("/proc/self/stat")
	start, ok := startTime(string(stat))
	if err := errors.Join(err1, err2, err3); err != nil || !ok {
		why := fmt.Sprintf("cannot read the gateway's cgroups from /proc (%v)", err)
		c.memory, c.pids = hierarchy{why: why}, hierarchy{why: why}
		return c
	}
	c.prefix = cgroupPrefix(os.Getpid(), start)
	c.memory, c.pids = findHierarchies(string(self), string(mounts))
	c.memory = place(c.memory, "memory")
	c.pids = place(c.pids, "pids")
	if c.memory.v2 && c.pids.v2 && c.memory.dir != "" && c.pids.dir != "" && c.memory.dir != c.pids.dir {
		// A process is in one v2 cgroup: both limits must be on it.
		c.pids = hierarchy{v2: true, why: fmt.Sprintf("cgroup v2 gives memory to children of %s but pids to children of %s only", c.memory.dir, c.pids.dir)}
	}
	for _, d := range slices.Compact([]string{c.memory.dir, c.pids.dir}) {
		if d != "" {
			removeStale(d)
		}
	}
	return c
}

// place decides where the servers' cgroups of controller ctl are made in
// h, the gateway's own cgroup: there on v1, if the gateway may write it;
// on v2, there if it gives ctl to children (or can be made to: the root,
// exempt from the no-internal-processes rule), else beside it, in its
// parent, if that gives ctl to children and the gateway may write it (a
// delegated subtree: root's, or a systemd user's). The gateway never
// moves itself: its own cgroup is its service manager's.
func place(h hierarchy, ctl string) hierarchy {
	if h.dir == "" {
		return h
	}
	if !h.v2 {
		if err := unix.Access(h.dir, unix.W_OK); err != nil {
			return hierarchy{why: fmt.Sprintf("cgroup v1 %s: the gateway may not make cgroups in %s (%v)", ctl, h.dir, err)}
		}
		return h
	}
	if !hasController(filepath.Join(h.dir, "cgroup.controllers"), ctl) {
		return hierarchy{v2: true, why: fmt.Sprintf("cgroup v2 has no %s controller for the gateway's cgroup %s", ctl, h.dir)}
	}
	own := filepath.Join(h.dir, "cgroup.subtree_control")
	if !hasController(own, ctl) {
		_ = os.WriteFile(own, []byte("+"+ctl), 0) // refused (EBUSY) unless the root
	}
	if hasController(own, ctl) {
		return h
	}
	parent := filepath.Dir(h.dir)
	if hasController(filepath.Join(parent, "cgroup.subtree_control"), ctl) && unix.Access(parent, unix.W_OK) == nil {
		return hierarchy{v2: true, dir: parent}
	}
	return hierarchy{v2: true, why: fmt.Sprintf("cgroup v2: the gateway's cgroup %s holds processes, so the kernel lets it give %s to no cgroup beneath it (no internal processes), "+
		"and its parent is not a delegated cgroup that gives %s to its children; run the gateway in a cgroup of its own in a delegated subtree (systemd-run --user --scope, or a unit with Delegate=yes)", h.dir, ctl, ctl)}
}

// hasController reports whether the controllers file at p lists ctl.
func hasController(p, ctl string) bool {
	b, err := os.ReadFile(p)
	return err == nil && slices.Contains(strings.Fields(string(b)), ctl)
}

// removeStale removes, from dir, the server cgroups of gateways that no
// longer run (their PID is gone or now another process's). What is left
// in one is what its server left behind when its gateway was killed (a
// descendant that left the server's process group, which the reaper
// does not know): it is killed first, as the dead gateway would have at
// the server's stop. Only in a cgroup filesystem: elsewhere the PIDs in
// a cgroup.procs file are not what that file says they are.
func removeStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, start, ok := staleOwner(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if s, ok := startTime(string(b)); ok && s == start {
				continue // its gateway runs
			}
		}
		d := filepath.Join(dir, e.Name())
		if err := os.Remove(d); err != nil && isCgroupFS(d) {
			_ = removeCgroup(d)
		}
	}
}

// isCgroupFS reports whether d is in a cgroup filesystem (v1 or v2).
func isCgroupFS(d string) bool {
	var st unix.Statfs_t
	return unix.Statfs(d, &st) == nil && (st.Type == unix.CGROUP_SUPER_MAGIC || st.Type == unix.CGROUP2_SUPER_MAGIC)
}

// join moves this process into the cgroups whose cgroup.procs files are
// procs ("0" is the writer itself), before the server is executed.
func join(procs []string) error {
	for _, p := range procs {
		if err := os.WriteFile(p, []byte("0"), 0); err != nil {
			return fmt.Errorf("sandbox: join cgroup %s: %w", filepath.Dir(p), err)
		}
	}
	return nil
}

// kill SIGKILLs the process pid.
func kill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

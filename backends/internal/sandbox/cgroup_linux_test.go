package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestPlaceV2: on cgroup v2 the servers' cgroups are made in the
// gateway's own cgroup where it gives the controller to children, else
// beside it where its parent does, else nowhere, saying why (a fake
// hierarchy: directories with controller files).
func TestPlaceV2(t *testing.T) {
	tree := func(t *testing.T, parentSub, ownSub string) string {
		root := t.TempDir()
		own := filepath.Join(root, "app.slice", "gw.scope")
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{
			filepath.Join(root, "app.slice", "cgroup.subtree_control"): parentSub,
			filepath.Join(own, "cgroup.controllers"):                   "cpu memory pids",
			filepath.Join(own, "cgroup.subtree_control"):               ownSub,
		} {
			if err := os.WriteFile(f, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return own
	}
	t.Run("own", func(t *testing.T) {
		own := tree(t, "", "memory pids") // the root, or a cgroup set up so
		if h := place(hierarchy{v2: true, dir: own}, "memory"); h.dir != own {
			t.Errorf("%+v, want %s", h, own)
		}
	})
	t.Run("beside", func(t *testing.T) {
		own := tree(t, "cpu memory pids", "")
		if h := place(hierarchy{v2: true, dir: own}, "pids"); h.dir != filepath.Dir(own) || !h.v2 {
			t.Errorf("%+v, want its parent", h)
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		own := tree(t, "cpu", "")
		h := place(hierarchy{v2: true, dir: own}, "memory")
		if h.dir != "" || !strings.Contains(h.why, "no internal processes") || !strings.Contains(h.why, own) {
			t.Errorf("%+v", h)
		}
	})
	t.Run("no controller", func(t *testing.T) {
		own := tree(t, "memory", "")
		h := place(hierarchy{v2: true, dir: own}, "io")
		if h.dir != "" || h.why != "cgroup v2 has no io controller for the gateway's cgroup "+own {
			t.Errorf("%+v", h)
		}
	})
}

// TestRemoveStale: the empty cgroups of gateways no longer running (their
// PID gone, or another process's now) are removed; this gateway's, one
// still holding something, and names not a gateway's are left.
func TestRemoveStale(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	start, ok := startTime(string(b))
	if !ok {
		t.Fatalf("no start time in %q", b)
	}
	dir := t.TempDir()
	mine := cgroupPrefix(os.Getpid(), start) + "s.1"
	reused := cgroupPrefix(os.Getpid(), start+1) + "s.1" // this PID, another process
	gone := cgroupPrefix(1<<30, 5) + "s.1"               // above any pid_max
	busy := cgroupPrefix(1<<30, 5) + "s.2"
	other := "user-app.scope"
	for _, d := range []string{mine, reused, gone, busy, other} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, busy, "cgroup.procs"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err) // rmdir fails, as on a cgroup with processes
	}
	removeStale(dir)
	for d, want := range map[string]bool{mine: true, reused: false, gone: false, busy: true, other: true} {
		if _, err := os.Stat(filepath.Join(dir, d)); (err == nil) != want {
			t.Errorf("%s: left %v, want %v", d, err == nil, want)
		}
	}
}

// TestCgroupsNew: on a writable v1 layout (a fake: plain directories)
// the memory and pids limits are written, and two Cgroups of one gateway
// (two Managers) never take the same name.
func TestCgroupsNew(t *testing.T) {
	root := t.TempDir()
	mem, pids := filepath.Join(root, "memory"), filepath.Join(root, "pids")
	for _, d := range []string{mem, pids} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	one := &Cgroups{memory: hierarchy{dir: mem}, pids: hierarchy{dir: pids}, prefix: cgroupPrefix(1, 2)}
	two := &Cgroups{memory: one.memory, pids: one.pids, prefix: one.prefix}
	a := one.New("s", 512, 64)
	if !a.Memory || !a.Processes || a.MemoryWhy != "" || a.ProcessesWhy != "" ||
		!slices.Equal(a.Join(), []string{filepath.Join(mem, "mcp-gateway.1.2.s.1", "cgroup.procs"), filepath.Join(pids, "mcp-gateway.1.2.s.1", "cgroup.procs")}) {
		t.Fatalf("%+v", a)
	}
	if got := readFile(t, filepath.Join(a.dirs[0], "memory.limit_in_bytes")); got != "536870912" {
		t.Errorf("memory.limit_in_bytes %q", got)
	}
	if got := readFile(t, filepath.Join(a.dirs[1], "pids.max")); got != "64" {
		t.Errorf("pids.max %q", got)
	}
	if _, err := os.Stat(filepath.Join(a.dirs[0], "memory.memsw.limit_in_bytes")); err == nil {
		t.Error("memsw written where the kernel accounts no swap")
	}
	if b := two.New("s", 512, 0); !b.Memory || len(b.dirs) != 1 || filepath.Base(b.dirs[0]) != "mcp-gateway.1.2.s.2" {
		t.Errorf("the second Cgroups made %q after %q", b.dirs, a.dirs)
	}
	none := &Cgroups{memory: hierarchy{why: "no memory here"}, pids: hierarchy{why: "no pids here"}}
	if g := none.New("s", 1, 1); g.Memory || g.Processes || g.MemoryWhy != "no memory here" || g.ProcessesWhy != "no pids here" || len(g.Join()) != 0 {
		t.Errorf("%+v", g)
	}
}

// TestSetMemory: swap is limited with the memory where the kernel
// accounts it: v1's memsw limit is the same, v2's swap is none.
func TestSetMemory(t *testing.T) {
	for _, c := range []struct {
		v2         bool
		swap, want string
	}{{false, "memory.memsw.limit_in_bytes", "1048576"}, {true, "memory.swap.max", "0"}} {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, c.swap), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := setMemory(d, c.v2, 1); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(d, c.swap)); got != c.want {
			t.Errorf("%s %q, want %q", c.swap, got, c.want)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOOMKilled reads the kernel's oom_kill count where it has one, and
// on older kernels the limit's failures with the server's SIGKILL.
func TestOOMKilled(t *testing.T) {
	for _, c := range []struct {
		v2           bool
		file, text   string
		killed, want bool
	}{
		{false, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", false, true},
		{false, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", true, false},
		{false, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n", true, true}, // failcnt 3 below
		{false, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n", false, false},
		{true, "memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n", false, true},
		{true, "memory.events", "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n", true, false},
	} {
		d := t.TempDir()
		for f, text := range map[string]string{c.file: c.text, "memory.failcnt": "3\n"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := (&Cgroup{mem: d, v2: c.v2}).OOMKilled(c.killed); got != c.want {
			t.Errorf("%s %q, killed %v: %v, want %v", c.file, c.text, c.killed, got, c.want)
		}
	}
	if (&Cgroup{}).OOMKilled(true) {
		t.Error("a cgroup without memory reports a memory kill")
	}
}

// TestRemoveStaleKillsLeftovers: a real cgroup of a gateway no longer
// running (killed with SIGKILL) that still holds a process its server
// left (here a sleep, as a daemon that left the server's process group
// would be) is emptied, the process killed, and removed. Before, it was
// left with its process running, at every later start.
func TestRemoveStaleKillsLeftovers(t *testing.T) {
	c := FindCgroups()
	dir := cmpOr(c.pids.dir, c.memory.dir)
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no cgroup here: %s %s", c.pids.why, c.memory.why)
		}
		t.Skipf("no cgroup here: %s %s", c.pids.why, c.memory.why)
	}
	stale := filepath.Join(dir, cgroupPrefix(1<<30, 5)+"s.1") // above any pid_max
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroup(stale) })
	left := exec.Command("sleep", "1000")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if left.ProcessState == nil {
			left.Process.Kill()
			left.Wait()
		}
	})
	if err := os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(strconv.Itoa(left.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	removeStale(dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale cgroup is left (%v)", err)
	}
	// Killed: a zombie by now (it left the cgroup as it died), reaped
	// here; a process still running is killed by the cleanup instead.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(left.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) == 0 || f[0] != "Z" {
		t.Fatalf("the process left in it is not dead: %s", b)
	}
	var ee *exec.ExitError
	if err := left.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the process left in it: %v", err)
	}
}

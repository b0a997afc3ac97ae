//go:build linux

package backends_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// limited is a sandbox under enforce with the limits the tests use (and
// network none: the server joins its cgroups from its own user and
// network namespace).
func limited() config.Sandbox {
	return config.Sandbox{Mode: config.SandboxEnforce, MemoryMB: 64, Processes: 48, Network: config.Network{Policy: "none"}}
}

// needCgroups skips a test where the machine cannot make the servers'
// cgroups (never in CI, where it must).
func needCgroups(t *testing.T) {
	t.Helper()
	if why := backends.CgroupLimitsMissing(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no cgroup limits in CI: %s", why)
		}
		t.Skipf("no cgroup limits here: %s", why)
	}
}

// forked calls the fork tool (at most max children) and returns how many
// it started and its error text ("" when it started them all).
func (e *env) forked(t *testing.T, server string, max int) (int, string) {
	t.Helper()
	text, failed := e.tool(t, server, "fork", map[string]string{"max": strconv.Itoa(max)})
	m := regexp.MustCompile(`^started (\d+) processes`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("fork: %q", text)
	}
	n, _ := strconv.Atoi(m[1])
	if !failed {
		return n, ""
	}
	return n, text
}

// cgroupOf is the server's memory cgroup directory (from its
// /proc/PID/cgroup).
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p := strings.SplitN(line, ":", 3); len(p) == 3 && (p[1] == "memory" || p[0] == "0" && p[1] == "") {
			if p[1] == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", p[2])
			}
			return filepath.Join("/sys/fs/cgroup", p[2])
		}
	}
	t.Fatalf("no memory cgroup in %s", b)
	return ""
}

// TestSandboxProcessLimit: under enforce with processes set, a fork loop
// stops short of the limit with the OS's EAGAIN, while the gateway and
// another server keep answering; the server survives it too.
func TestSandboxProcessLimit(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	h := newSandboxHome(t)
	e := start(t, []config.Server{hostile("capped", limited()), hostile("other", config.Sandbox{})}, h.options)
	st := e.waitState(t, "capped", backends.Ready)
	if sb := st.Sandbox; sb == nil || !sb.MemoryEnforced || !sb.ProcessesEnforced || len(sb.NotEnforced) > 0 || sb.Summary() != "fs ✓ net none mem 64 MB procs 48" {
		t.Fatalf("status sandbox: %+v", st.Sandbox)
	}
	e.waitState(t, "other", backends.Ready)
	dir := cgroupOf(t, st.PID)
	if !strings.Contains(filepath.Base(dir), "mcp-gateway."+strconv.Itoa(os.Getpid())+".") {
		t.Errorf("capped runs in %s, not a cgroup of this gateway's", dir)
	}

	n, failed := e.forked(t, "capped", 100)
	t.Logf("under processes 48: %d started, then %s", n, failed)
	if failed == "" || !strings.Contains(failed, "resource temporarily unavailable") || n == 0 || n >= 48 {
		t.Errorf("a fork loop under processes 48: started %d, error %q; want fewer than 48 (its own threads count), then EAGAIN", n, failed)
	}
	if text, failed := e.tool(t, "other", "read_file", map[string]string{"path": filepath.Join(h.notes, "todo.txt")}); failed || text != "buy milk" {
		t.Errorf("the other server after the fork loop: %q (error %v)", text, failed)
	}
	// Its children are ended: it may fork again, as many.
	if again, _ := e.forked(t, "capped", 100); again < n-2 {
		t.Errorf("the second fork loop started %d, the first %d", again, n)
	}
	// Its cgroup goes with it.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's cgroup %s is left behind (%v)", dir, err)
	}
}

// TestSandboxMemoryLimit: allocating past memory_mb ends the server with
// "exceeded its memory limit (64 MB)" as the call's error and status's;
// restart: on-failure restarts it as any crash, and it answers again.
func TestSandboxMemoryLimit(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	h := newSandboxHome(t)
	again, never := hostile("again", limited()), hostile("never", limited())
	again.Restart = "on-failure"
	e := start(t, []config.Server{again, never}, h.options)
	for _, name := range []string{"again", "never"} {
		e.waitState(t, name, backends.Ready)
		if text, failed := e.tool(t, name, "alloc", map[string]string{"mb": "16"}); failed || text != "allocated 16 MB" {
			t.Fatalf("%s: 16 MB under a limit of 64: %q (error %v)", name, text, failed)
		}
		_, err := e.CallTool(context.Background(), name, "alloc", json.RawMessage(`{"mb":"256"}`), backends.CallOptions{})
		if want := "MCP server '" + name + "' exceeded its memory limit (64 MB)"; err == nil || err.Error() != want {
			t.Errorf("%s: 256 MB under a limit of 64: %v, want %q", name, err, want)
		}
	}
	if st := e.waitState(t, "never", backends.Crashed); st.Error != "exceeded its memory limit (64 MB)" {
		t.Errorf("never's status error %q", st.Error)
	}
	st := e.waitState(t, "again", backends.Ready)
	if st.Restarts != 1 {
		t.Errorf("again restarted %d times", st.Restarts)
	}
	if text, failed := e.tool(t, "again", "alloc", map[string]string{"mb": "16"}); failed || text != "allocated 16 MB" {
		t.Errorf("again after its restart: %q (error %v)", text, failed)
	}
	if len(e.log.Find("restarting backend", "exceeded its memory limit (64 MB)")) == 0 {
		t.Errorf("the restart's reason is not logged")
	}
}

// TestSandboxLimitsNeedTheCgroup: with the server left out of its cgroup
// (Options.NoCgroupJoin), the fork loop and the allocation of the tests
// above succeed: they fail without the join.
func TestSandboxLimitsNeedTheCgroup(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	h := newSandboxHome(t)
	e := start(t, []config.Server{hostile("loose", limited())}, func(o *backends.Options) {
		h.options(o)
		o.NoCgroupJoin = true
	})
	e.waitState(t, "loose", backends.Ready)
	if n, failed := e.forked(t, "loose", 100); n != 100 || failed != "" {
		t.Errorf("out of its cgroup, the fork loop started %d (%q), want all 100", n, failed)
	}
	if text, failed := e.tool(t, "loose", "alloc", map[string]string{"mb": "256"}); failed || text != "allocated 256 MB" {
		t.Errorf("out of its cgroup, 256 MB: %q (error %v)", text, failed)
	}
}

// TestSandboxCgroupSealedWithoutLandlock: a server with limits whose
// filesystem is not confined (best_effort on a kernel without Landlock)
// cannot write itself out of its cgroup: as root, every cgroup
// filesystem is read-only in a mount namespace of its own. It could
// before (its pid written into the hierarchy's root cgroup.procs, out
// of memory_mb and processes); not as root, status says it can.
func TestSandboxCgroupSealedWithoutLandlock(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	h := newSandboxHome(t)
	sb := limited()
	sb.Mode, sb.Network = config.SandboxBestEffort, config.Network{}
	e := start(t, []config.Server{hostile("h", sb)}, func(o *backends.Options) {
		h.options(o)
		o.LandlockABI = func() int { return 0 }
	})
	st := e.waitState(t, "h", backends.Ready)
	if sb := st.Sandbox; sb == nil || sb.FS || !sb.MemoryEnforced || !sb.ProcessesEnforced {
		t.Fatalf("status sandbox: %+v", st.Sandbox)
	}
	gap := slices.ContainsFunc(st.Sandbox.Gaps, func(g string) bool { return strings.Contains(g, "leaving its cgroup") })
	if root := os.Geteuid() == 0; gap == root {
		t.Fatalf("as root %v, status gaps %q", root, st.Sandbox.Gaps)
	}
	if os.Geteuid() != 0 {
		return // it can leave, as status says
	}
	dir := cgroupOf(t, st.PID)
	top := "/sys/fs/cgroup"
	if strings.HasPrefix(dir, "/sys/fs/cgroup/memory/") {
		top = "/sys/fs/cgroup/memory"
	}
	text, failed := e.tool(t, "h", "write_file", map[string]string{"path": filepath.Join(top, "cgroup.procs"), "text": "0"})
	if !failed || !strings.Contains(text, "read-only file system") {
		t.Errorf("writing itself into %s: %q (error %v), want EROFS", top, text, failed)
	}
	if now := cgroupOf(t, st.PID); now != dir {
		t.Errorf("the server left its cgroup %s for %s", dir, now)
	}
}

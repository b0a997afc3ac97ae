package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindHierarchies locates the gateway's own memory and pids cgroups
// from /proc/self/cgroup and /proc/self/mountinfo as these machines, a
// systemd hybrid, a unified-only desktop, a container without a cgroup
// namespace and a machine without cgroups have them (testdata/cgroup).
func TestFindHierarchies(t *testing.T) {
	for _, c := range []struct {
		name      string
		mem, pids hierarchy
	}{
		{"v1",
			hierarchy{dir: "/sys/fs/cgroup/memory/process_api/3ba29252fc861cab04f7b051321799dc"},
			hierarchy{dir: "/sys/fs/cgroup/pids"}},
		// The unified hierarchy is there, but the controllers are v1's.
		{"hybrid",
			hierarchy{dir: "/sys/fs/cgroup/memory/user.slice/user-1000.slice/session-3.scope"},
			hierarchy{dir: "/sys/fs/cgroup/pids/user.slice/user-1000.slice/session-3.scope"}},
		{"v2",
			hierarchy{v2: true, dir: "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-1.scope"},
			hierarchy{v2: true, dir: "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-1.scope"}},
		// The container's own cgroup is the mount's root (a space in its
		// mount point, escaped); pids' mount is of another cgroup.
		{"v1-container",
			hierarchy{dir: "/sys/fs/cgroup/mem ory/inner"},
			hierarchy{why: "the gateway's cgroup v1 pids cgroup /docker/abc is not under a mount of the hierarchy"}},
		{"none",
			hierarchy{why: "no cgroup memory controller is mounted (neither a cgroup v1 memory hierarchy nor cgroup v2)"},
			hierarchy{why: "no cgroup pids controller is mounted (neither a cgroup v1 pids hierarchy nor cgroup v2)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(f string) string {
				b, err := os.ReadFile(filepath.Join("testdata", "cgroup", c.name, f))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			mem, pids := findHierarchies(read("cgroup"), read("mountinfo"))
			for _, h := range []*hierarchy{&mem, &pids, &c.mem, &c.pids} {
				h.dir = filepath.ToSlash(h.dir)
			}
			if mem != c.mem {
				t.Errorf("memory %+v, want %+v", mem, c.mem)
			}
			if pids != c.pids {
				t.Errorf("pids %+v, want %+v", pids, c.pids)
			}
		})
	}
}

// TestCgroupNames: a gateway's cgroups are named for its PID and start
// time, which stale removal reads back; a server's name is made safe.
func TestCgroupNames(t *testing.T) {
	name := cgroupPrefix(4242, 987654) + cgroupName("my server/../x") + ".3"
	if name != "mcp-gateway.4242.987654.my_server____x.3" {
		t.Errorf("name %q", name)
	}
	if pid, start, ok := staleOwner(name); !ok || pid != 4242 || start != 987654 {
		t.Errorf("staleOwner(%q) = %d %d %v", name, pid, start, ok)
	}
	for _, n := range []string{"mcp-gateway.x.1.s.1", "other.1.2.s.1", "mcp-gateway.1"} {
		if _, _, ok := staleOwner(n); ok {
			t.Errorf("staleOwner(%q) took it for a gateway's", n)
		}
	}
	if len(cgroupName(strings.Repeat("a", 300))) != 64 {
		t.Error("a long name is not bounded")
	}
	// The command name may hold spaces and parentheses.
	stat := "4242 (my (odd) gw) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 7 0 987654 1000000 200"
	if s, ok := startTime(stat); !ok || s != 987654 {
		t.Errorf("startTime = %d %v", s, ok)
	}
}

// TestMemoryExceeded is the crash reason status and calls show.
func TestMemoryExceeded(t *testing.T) {
	r := MemoryExceeded(512)
	if r != "exceeded its memory limit (512 MB)" || !IsMemoryExceeded(r) || IsMemoryExceeded("exit status 1") {
		t.Errorf("%q", r)
	}
}

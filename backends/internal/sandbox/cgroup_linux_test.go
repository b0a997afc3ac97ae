package sandbox

import (
	"os"
	"path/filepath"
	"strings"
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

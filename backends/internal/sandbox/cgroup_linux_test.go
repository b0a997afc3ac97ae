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

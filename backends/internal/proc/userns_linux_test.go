package proc_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
)

// TestUserNS: Spec.UserNS starts the child in a user namespace of its
// own that maps only the gateway's user (the sandbox mode makes its
// mount namespace there), and keeps the gateway's network namespace.
func TestUserNS(t *testing.T) {
	t.Parallel()
	p, err := proc.Start(proc.Spec{Command: "sh", Args: []string{"-c", `echo $(cat /proc/self/uid_map) $(readlink /proc/self/ns/net); read x`}, Env: os.Environ(), UserNS: true})
	if err != nil {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skipf("the OS refused a user namespace: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.CloseFiles()
	})
	f := strings.Fields(firstLine(t, p.Stdout, 5*time.Second))
	uid := strconv.Itoa(os.Getuid())
	if len(f) != 4 || f[0] != uid || f[1] != uid || f[2] != "1" {
		t.Errorf("uid_map and netns %q, want only %s mapped", f, uid)
	}
	if net, _ := os.Readlink("/proc/self/ns/net"); len(f) == 4 && f[3] != net {
		t.Errorf("network namespace %s, want the gateway's %s", f[3], net)
	}
}

package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestPrepareJobLimits: on Windows memory_mb and processes are enforced
// (by the server's Job Object, which the gateway makes itself), while
// files and the network are not: best_effort runs the command as it is
// and says why for each; enforce refuses, naming files and network only.
func TestPrepareJobLimits(t *testing.T) {
	h := Host{Helper: []string{"gw", Arg}, StateDir: filepath.Join(t.TempDir(), "s")}
	sb := config.Sandbox{Mode: config.SandboxBestEffort, Network: config.Network{Policy: "none"}, MemoryMB: 512, Processes: 64}
	argv, _, a, err := Prepare(sb, Spec{Command: "server", Args: []string{"-x"}}, h)
	if err != nil || !slices.Equal(argv, []string{"server", "-x"}) {
		t.Fatalf("best_effort: %v %q", err, argv)
	}
	if got := a.Summary(); got != "fs ✗ net all mem 512 MB procs 64" || len(a.NotEnforced) != 2 ||
		!strings.HasPrefix(a.NotEnforced[0], "filesystem: not on Windows") || !strings.HasPrefix(a.NotEnforced[1], "network none: not on Windows") {
		t.Errorf("best_effort: %q %q", got, a.NotEnforced)
	}
	sb.Mode = config.SandboxEnforce
	_, _, a, err = Prepare(sb, Spec{Command: "server"}, h)
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Missing) != 2 || a.MemoryEnforced || a.ProcessesEnforced {
		t.Errorf("enforce: %v %+v", err, a)
	}
}

package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestPrepareNeverGrantsGatewayFiles: a read or write path that is the
// home directory, or holds the gateway's own files, is refused under
// every mode, before anything starts.
func TestPrepareNeverGrantsGatewayFiles(t *testing.T) {
	home := filepath.FromSlash("/home/me")
	tokens := filepath.Join(home, ".config", "mcp-gateway", "tokens")
	h := Host{Helper: []string{"gw", Arg}, ABI: 7, Home: home, Protected: []string{tokens}}
	for _, sb := range []config.Sandbox{
		{Mode: config.SandboxBestEffort, Read: []string{filepath.Join(home, ".config")}},
		{Mode: config.SandboxEnforce, Write: []string{tokens}},
		{Mode: config.SandboxBestEffort, Read: []string{home}},
		{Mode: config.SandboxBestEffort, Read: []string{filepath.Dir(home)}},
		{Mode: config.SandboxBestEffort, Read: []string{filepath.Join(tokens, "github.json")}},
	} {
		_, _, _, err := Prepare(sb, Spec{Command: "sh"}, h)
		if !Unstartable(err) || !strings.Contains(err.Error(), "would expose") {
			t.Errorf("%+v: %v, want a refusal", sb, err)
		}
	}
}

// TestConfinedEnv: HOME and TMPDIR are the state directory, and the XDG
// directories that would point into the user's home are left to follow
// HOME.
func TestConfinedEnv(t *testing.T) {
	state := filepath.FromSlash("/state/s")
	got := confinedEnv([]string{"HOME=/home/me", "PATH=/usr/bin", "XDG_CONFIG_HOME=/home/me/.config", "TMPDIR=/tmp", "LANG=C"}, state)
	tmp := filepath.Join(state, "tmp")
	want := []string{"PATH=/usr/bin", "LANG=C", "HOME=" + state, "TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestSummary is the status line's form.
func TestSummary(t *testing.T) {
	for _, c := range []struct {
		a    Applied
		want string
	}{
		{Applied{FS: true, Network: "none", NetworkEnforced: true}, "fs ✓ net none mem — procs —"},
		{Applied{FS: true, Network: "list", Allow: []string{"a.example:443", "b.example:8080"}, Proxy: "127.0.0.1:41234", NetworkEnforced: true, MemoryMB: 512}, "fs ✓ net allow-list(2) via proxy 127.0.0.1:41234 mem — procs —"},
		{Applied{Network: "none", MemoryMB: 512, MemoryEnforced: true, Processes: 64, ProcessesEnforced: true}, "fs ✗ net all mem 512 MB procs 64"},
		{Applied{FS: true, Network: "all"}, "fs ✓ net all mem — procs —"},
	} {
		if got := c.a.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.a, got, c.want)
		}
	}
}

// TestPrepareWithoutConfinement: where nothing can be applied (no
// Landlock, or an OS not done yet), enforce refuses and names why;
// best_effort runs the command as it is, in its own HOME, and says what
// it did not apply.
func TestPrepareWithoutConfinement(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s")
	h := Host{Helper: []string{"gw", Arg}, ABI: 0, StateDir: state}
	sb := config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "none"}}
	_, _, a, err := Prepare(sb, Spec{Command: "server", Args: []string{"-x"}}, h)
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Missing) != 2 || !strings.HasPrefix(refused.Missing[0], "filesystem: ") || a.FS {
		t.Fatalf("enforce: %v (%+v)", err, a)
	}
	sb.Mode = config.SandboxBestEffort
	argv, env, a, err := Prepare(sb, Spec{Command: "server", Args: []string{"-x"}, Env: []string{"HOME=/home/me"}}, h)
	if err != nil || !slices.Equal(argv, []string{"server", "-x"}) || !slices.Contains(env, "HOME="+state) || a.FS || len(a.NotEnforced) != 2 {
		t.Fatalf("best_effort: %v %q %q %+v", err, argv, env, a)
	}
}

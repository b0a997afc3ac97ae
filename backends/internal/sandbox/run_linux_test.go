package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestUnmovedRefusesNewLinks: a path Prepare resolved that has become a
// symbolic link by the time the sandbox mode applies it (made by what
// is left of the server's last run) is refused, not granted where it
// now leads; the system's directories and /proc/self are links on
// purpose and pass.
func TestUnmovedRefusesNewLinks(t *testing.T) {
	dir := t.TempDir()
	notes, secret := filepath.Join(dir, "notes"), filepath.Join(dir, "secret")
	for _, d := range []string{notes, secret} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := Plan{FS: true, Read: append(systemDirs, notes), Write: []string{dir}}
	if err := unmoved(p); err != nil {
		t.Fatalf("before the link: %v", err)
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, notes); err != nil {
		t.Fatal(err)
	}
	if err := unmoved(p); err == nil || !strings.Contains(err.Error(), notes+" now leads to "+secret) {
		t.Errorf("after the link: %v", err)
	}
}

// TestPrepareSignalScopeGap: Landlock scopes signals and abstract UNIX
// sockets from ABI 6; below it a confined server can signal the gateway
// (tried: kill -0 of the gateway succeeded at ABI 5) and status says so.
func TestPrepareSignalScopeGap(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for abi, want := range map[int]bool{5: true, 6: false} {
		h := Host{Helper: []string{"gw", Arg}, ABI: abi, StateDir: filepath.Join(t.TempDir(), "s")}
		_, _, a, err := Prepare(config.Sandbox{Mode: config.SandboxEnforce}, Spec{Command: exe}, h)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(a.Gaps, func(g string) bool { return strings.HasPrefix(g, "signals to") })
		if got != want {
			t.Errorf("ABI %d: gaps %q, want the signals gap %v", abi, a.Gaps, want)
		}
	}
}

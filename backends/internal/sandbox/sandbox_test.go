package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	_ "github.com/mcp-gateway/mcp-gateway/backends/testutil" // under Wine: t.TempDir cleans up (see its wine.go)
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
// Landlock, no sandbox helper, or an OS that confines no files), enforce refuses and names why;
// best_effort runs the command as it is, in its own HOME, and says what
// it did not apply.
func TestPrepareWithoutConfinement(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s")
	h := Host{Helper: []string{"gw", Arg}, ABI: 0, StateDir: state}
	if runtime.GOOS == "darwin" {
		h.Helper = nil // macOS needs no Landlock: without its helper, nothing can be applied
	}
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

// TestPrepareNetworkList: a list is enforced through the egress proxy:
// the kernel's one TCP port is the proxy's, the proxy variables point at
// it (a NO_PROXY or ALL_PROXY of the user's is dropped), and without a
// proxy enforce refuses.
func TestPrepareNetworkList(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock TCP rules: Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := Host{Helper: []string{"gw", Arg}, ABI: 4, StateDir: filepath.Join(t.TempDir(), "s"), Proxy: "127.0.0.1:41234"}
	sb := config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "list", Allow: []string{"api.github.com:443", "example.org:80"}}}
	argv, env, a, err := Prepare(sb, Spec{Command: exe, Env: []string{"NO_PROXY=github.com", "ALL_PROXY=socks5://x:1080", "HTTPS_PROXY=http://corp:3128"}}, h)
	if err != nil {
		t.Fatal(err)
	}
	var p Plan
	if err := json.Unmarshal([]byte(argv[len(argv)-1]), &p); err != nil || p.Net != "ports" || !slices.Equal(p.Ports, []uint16{41234}) {
		t.Errorf("plan %+v, %v: want connect to the proxy's port only", p, err)
	}
	u := "http://127.0.0.1:41234"
	for _, want := range []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u, "NO_PROXY=", "no_proxy="} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %q: %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "corp") || strings.Contains(kv, "socks5") || kv == "NO_PROXY=github.com" {
			t.Errorf("env keeps %q", kv)
		}
	}
	if !a.NetworkEnforced || a.Proxy != h.Proxy || len(a.Allow) != 2 || a.NetNS {
		t.Errorf("applied %+v", a)
	}

	h.Proxy = ""
	_, _, a, err = Prepare(sb, Spec{Command: exe}, h)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "no egress proxy") || a.NetworkEnforced {
		t.Errorf("without a proxy: %v (%+v)", err, a)
	}
}

// TestPrepareLimits: memory_mb and processes are enforced by the
// server's cgroup, which the plan has the sandbox mode join (even with
// nothing else to apply); a cgroup that could not be made is refused
// under enforce with what the OS lacks, and said under best_effort.
func TestPrepareLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("cgroups: Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plan := func(argv []string) Plan {
		t.Helper()
		var p Plan
		if err := json.Unmarshal([]byte(argv[len(argv)-1]), &p); err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		return p
	}
	made := &Cgroup{Memory: true, Processes: true, dirs: []string{"/cg/memory/s", "/cg/pids/s"}}
	sb := config.Sandbox{Mode: config.SandboxEnforce, MemoryMB: 512, Processes: 64}
	h := Host{Helper: []string{"gw", Arg}, ABI: 7, Cgroup: made}
	argv, _, a, err := Prepare(sb, Spec{Command: exe}, h)
	if err != nil || !a.MemoryEnforced || !a.ProcessesEnforced || len(a.NotEnforced) > 0 || a.Summary() != "fs ✓ net all mem 512 MB procs 64" {
		t.Fatalf("%v %+v", err, a)
	}
	if p := plan(argv); !slices.Equal(p.Cgroups, []string{filepath.Join("/cg/memory/s", "cgroup.procs"), filepath.Join("/cg/pids/s", "cgroup.procs")}) {
		t.Errorf("plan's cgroups %q", p.Cgroups)
	}

	// Nothing but the limits to apply: still through the sandbox mode.
	best := sb
	best.Mode = config.SandboxBestEffort
	h.ABI = 0
	argv, _, a, err = Prepare(best, Spec{Command: exe}, h)
	if err != nil || argv[0] != "gw" || len(plan(argv).Cgroups) != 2 || !a.MemoryEnforced || a.FS {
		t.Errorf("limits alone: %v %q %+v", err, argv, a)
	}

	h.ABI = 7
	h.NoCgroupJoin = true
	if argv, _, _, err = Prepare(sb, Spec{Command: exe}, h); err != nil || plan(argv).Cgroups != nil {
		t.Errorf("NoCgroupJoin: %v %q", err, argv)
	}

	h = Host{Helper: []string{"gw", Arg}, ABI: 7, Cgroup: &Cgroup{Processes: true, MemoryWhy: "cgroup v2 has no memory controller", dirs: []string{"/cg/s"}}}
	_, _, a, err = Prepare(sb, Spec{Command: exe}, h)
	var refused *RefusedError
	if !errors.As(err, &refused) || !slices.Equal(refused.Missing, []string{"memory_mb 512: cgroup v2 has no memory controller"}) || a.MemoryEnforced || a.ProcessesEnforced {
		t.Errorf("enforce without memory: %v %+v", err, a)
	}
	argv, _, a, err = Prepare(best, Spec{Command: exe}, h)
	if err != nil || a.MemoryEnforced || !a.ProcessesEnforced || !slices.Equal(a.NotEnforced, []string{"memory_mb 512: cgroup v2 has no memory controller"}) ||
		a.Summary() != "fs ✓ net all mem — procs 64" || len(plan(argv).Cgroups) != 1 {
		t.Errorf("best_effort without memory: %v %+v", err, a)
	}
	h.Helper = nil
	if _, _, a, _ = Prepare(best, Spec{Command: exe}, h); a.ProcessesEnforced || len(a.NotEnforced) != 3 {
		t.Errorf("without the sandbox mode: %+v", a)
	}
}

// TestGuardedIgnoresCase: where the filesystem ignores case (macOS,
// Windows) a read path spelled in another case is the home, or holds
// the gateway's files, all the same; on Linux it is another path.
func TestGuardedIgnoresCase(t *testing.T) {
	h := Host{Home: "/Users/me", Protected: []string{"/Users/me/Library/Application Support/mcp-gateway/tokens"}}
	for p, want := range map[string]string{
		"/USERS/ME": "the whole home directory",
		"/users":    "the whole home directory",
		"/users/me/library/application support/MCP-GATEWAY": "the gateway's " + filepath.FromSlash("/Users/me/Library/Application Support/mcp-gateway/tokens"), // as Clean gives it: \ on Windows
		"/Users/me2": "",
	} {
		if got := guardedFold(p, h, true); got != want {
			t.Errorf("caseless: guarded(%q) = %q, want %q", p, got, want)
		}
	}
	if got := guardedFold("/USERS/ME", h, false); got != "" {
		t.Errorf("with case: guarded(/USERS/ME) = %q", got)
	}
}

//go:build linux

package backends_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// The sandbox tests run the hostile testbackend confined, through this
// test binary in its sandbox mode (TestMain), and check that what it may
// not touch fails with the OS's own error, in the server.

// sandboxHome is a fake user's home: a private key and the gateway's
// config in it, and a directory the server is given to read.
type sandboxHome struct {
	home, key, config, notes, state string
}

func newSandboxHome(t testing.TB) sandboxHome {
	t.Helper()
	if backends.LandlockABI() == 0 {
		t.Skip("the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs): nothing to confine with")
	}
	dir := t.TempDir()
	h := sandboxHome{home: filepath.Join(dir, "home"), state: filepath.Join(dir, "state")}
	h.key = filepath.Join(h.home, ".ssh", "id_rsa")
	h.config = filepath.Join(h.home, ".config", "mcp-gateway", "config.yaml")
	h.notes = filepath.Join(h.home, "notes")
	for f, text := range map[string]string{h.key: "PRIVATE KEY", h.config: "servers: []", filepath.Join(h.notes, "todo.txt"): "buy milk"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// options confines with this test binary, in home h.
func (h sandboxHome) options(o *backends.Options) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	o.Sandbox = []string{exe, backends.SandboxArg}
	o.SandboxDir = h.state
	o.Protected = []string{h.config}
	o.Environ = []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH")}
}

// hostile is the hostile testbackend with sandbox sb.
func hostile(name string, sb config.Sandbox) config.Server {
	s := srv(name, "-hostile")
	s.Sandbox = sb
	return s
}

// tool calls a hostile tool and returns its text and whether it failed.
func (e *env) tool(t *testing.T, server, tool string, args map[string]string) (string, bool) {
	t.Helper()
	a, _ := json.Marshal(args)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(e.call(t, server, tool, string(a)), &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("%s: %v", tool, err)
	}
	return r.Content[0].Text, r.IsError
}

// denied checks that the tool failed with the OS's denial.
func denied(t *testing.T, what, text string, failed bool) {
	t.Helper()
	if !failed || !strings.Contains(text, "permission denied") {
		t.Errorf("%s: %q (error %v), want EACCES/EPERM from the OS", what, text, failed)
	}
}

func TestSandboxEnforceConfinesFiles(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	e := start(t, []config.Server{hostile("h", config.Sandbox{Mode: config.SandboxEnforce, Read: []string{h.notes}, Network: config.Network{Policy: "none"}})}, h.options)
	st := e.waitState(t, "h", backends.Ready)
	if sb := st.Sandbox; sb == nil || !sb.FS || !sb.NetworkEnforced || !sb.NetNS || sb.Network != "none" || len(sb.NotEnforced) > 0 || len(sb.Gaps) != 1 {
		t.Fatalf("status sandbox: %+v", st.Sandbox)
	}
	if got := st.Sandbox.Summary(); got != "fs ✓ net none mem — procs —" {
		t.Errorf("summary %q", got)
	}

	if text, failed := e.tool(t, "h", "read_file", map[string]string{"path": filepath.Join(h.notes, "todo.txt")}); failed || text != "buy milk" {
		t.Errorf("reading a read path: %q (error %v)", text, failed)
	}
	text, failed := e.tool(t, "h", "read_file", map[string]string{"path": h.key})
	denied(t, "reading ~/.ssh/id_rsa", text, failed)
	text, failed = e.tool(t, "h", "read_file", map[string]string{"path": h.config})
	denied(t, "reading the gateway's config", text, failed)

	text, failed = e.tool(t, "h", "write_file", map[string]string{"path": filepath.Join(h.home, ".bashrc"), "text": "evil"})
	denied(t, "writing ~/.bashrc", text, failed)
	text, failed = e.tool(t, "h", "write_file", map[string]string{"path": filepath.Join(h.notes, "todo.txt"), "text": "evil"})
	denied(t, "writing a read-only path", text, failed)
	own := filepath.Join(h.state, "h", "cache.txt") // its state directory, also its HOME
	if text, failed := e.tool(t, "h", "write_file", map[string]string{"path": own, "text": "mine"}); failed {
		t.Errorf("writing its state directory: %q", text)
	}
	if b, err := os.ReadFile(filepath.Join(h.notes, "todo.txt")); err != nil || string(b) != "buy milk" {
		t.Errorf("todo.txt now %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.home, ".bashrc")); err == nil {
		t.Error(".bashrc was written")
	}
}

func TestSandboxEnforceNetwork(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	listen := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l.Addr().String() // connect succeeds from the backlog; nothing accepts
	}
	allowed, other := listen(), listen()
	e := start(t, []config.Server{
		hostile("none", config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "none"}}),
		hostile("list", config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "list", Allow: []string{allowed}}}),
	}, h.options)
	e.waitState(t, "none", backends.Ready)
	if st := e.waitState(t, "list", backends.Ready); st.Sandbox == nil || st.Sandbox.Summary() != "fs ✓ net allow-list(1) via proxy "+st.Sandbox.Proxy+" mem — procs —" {
		t.Errorf("list's sandbox: %+v", st.Sandbox)
	}

	text, failed := e.tool(t, "none", "connect", map[string]string{"addr": allowed})
	denied(t, "network none: connect", text, failed)
	// A list is reached through the egress proxy only
	// (TestSandboxEgressProxy): the kernel refuses the listed address
	// itself, as any other.
	text, failed = e.tool(t, "list", "connect", map[string]string{"addr": allowed})
	denied(t, "a direct connect to the listed address", text, failed)
	text, failed = e.tool(t, "list", "connect", map[string]string{"addr": other})
	denied(t, "connect to a port not listed", text, failed)

	// UDP: Landlock does not govern it; under none the server's own
	// network namespace, with no interface up, does.
	if st := e.status(t, "none"); !st.Sandbox.NetNS || slices.ContainsFunc(st.Sandbox.Gaps, func(g string) bool { return strings.HasPrefix(g, "UDP") }) {
		t.Errorf("none's sandbox: netns %v, gaps %q", st.Sandbox.NetNS, st.Sandbox.Gaps)
	}
	if text, failed := e.tool(t, "none", "connect", map[string]string{"addr": allowed, "network": "udp"}); !failed || !strings.Contains(text, "network is unreachable") {
		t.Errorf("network none: UDP to loopback: %q (error %v), want ENETUNREACH", text, failed)
	}
	if text, failed := e.tool(t, "list", "connect", map[string]string{"addr": allowed, "network": "udp"}); failed {
		t.Errorf("a list leaves UDP open (as status says), but: %q", text)
	}
}

// TestSandboxEgressProxy: under a network list, the server reaches a
// listed host:port through its egress proxy (HTTP_PROXY for plain HTTP,
// HTTPS_PROXY for a CONNECT tunnel); the proxy refuses another loopback
// port with 403 naming the list; and the kernel refuses a direct
// connection to the listed address, which bypasses the proxy.
func TestSandboxEgressProxy(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	serve := func(body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, body)
		}))
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	allowed, other := serve("allowed here"), serve("should not be reached")
	e := start(t, []config.Server{
		hostile("list", config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "list", Allow: []string{allowed}}}),
	}, h.options)
	st := e.waitState(t, "list", backends.Ready)
	if sb := st.Sandbox; sb == nil || !sb.NetworkEnforced || sb.NetNS || !strings.HasPrefix(sb.Proxy, "127.0.0.1:") ||
		!slices.Equal(sb.Allow, []string{allowed}) || sb.Summary() != "fs ✓ net allow-list(1) via proxy "+sb.Proxy+" mem — procs —" {
		t.Fatalf("status sandbox: %+v", st.Sandbox)
	}

	if text, failed := e.tool(t, "list", "http_get", map[string]string{"addr": "http://" + allowed + "/x"}); failed || text != "allowed here" {
		t.Errorf("GET of the listed address through the proxy: %q (error %v)", text, failed)
	}
	if text, failed := e.tool(t, "list", "connect_proxy", map[string]string{"addr": allowed}); failed || text != "allowed here" {
		t.Errorf("CONNECT tunnel to the listed address: %q (error %v)", text, failed)
	}
	for _, tool := range []string{"http_get", "connect_proxy"} {
		addr := other
		if tool == "http_get" {
			addr = "http://" + other + "/x"
		}
		text, failed := e.tool(t, "list", tool, map[string]string{"addr": addr})
		if !failed || !strings.Contains(text, "403 Forbidden") || !strings.Contains(text, other+" is not in this server's sandbox network list ("+allowed+")") {
			t.Errorf("%s to a port not listed: %q (error %v), want the proxy's 403 naming the list", tool, text, failed)
		}
	}
	// Bypassing the proxy: the kernel refuses.
	text, failed := e.tool(t, "list", "connect", map[string]string{"addr": allowed})
	denied(t, "a direct connect to the listed address", text, failed)
}

// TestSandboxListWithoutTCPRules: on a kernel whose Landlock has no TCP
// rules (ABI 3), a list cannot be enforced: enforce refuses, best_effort
// runs the server with the network open and no proxy variables (a
// proxy left running would be found by TestMain's goroutine check).
func TestSandboxListWithoutTCPRules(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	sb := config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "list", Allow: []string{"api.github.com:443"}}}
	best := sb
	best.Mode = config.SandboxBestEffort
	e := start(t, []config.Server{hostile("strict", sb), hostile("lenient", best)}, func(o *backends.Options) {
		h.options(o)
		o.LandlockABI = func() int { return 3 }
	})
	if st := e.waitState(t, "strict", backends.Failed); !strings.Contains(st.Error, "network api.github.com:443: the kernel's Landlock is ABI 3, TCP rules need ABI 4") {
		t.Errorf("strict: %s", st.Error)
	}
	st := e.waitState(t, "lenient", backends.Ready)
	if sb := st.Sandbox; sb == nil || sb.NetworkEnforced || sb.Proxy != "" || !sb.FS || sb.Summary() != "fs ✓ net all mem — procs —" || len(sb.NotEnforced) != 1 {
		t.Errorf("lenient's sandbox: %+v", st.Sandbox)
	}
	if text, failed := e.tool(t, "lenient", "connect_proxy", map[string]string{"addr": "api.github.com:443"}); !failed || !strings.Contains(text, "no HTTPS_PROXY") {
		t.Errorf("lenient has a proxy: %q", text)
	}
}

// TestSandboxWithoutLandlock simulates a kernel without Landlock (ABI 0):
// enforce refuses to start the server, saying what the OS lacks;
// best_effort starts it unconfined and says so.
func TestSandboxWithoutLandlock(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	sb := config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "none"}}
	best := sb
	best.Mode = config.SandboxBestEffort
	strict := hostile("strict", sb)
	strict.Restart = "on-failure" // a refusal is not retried all the same
	e := start(t, []config.Server{strict, hostile("lenient", best)}, func(o *backends.Options) {
		h.options(o)
		o.LandlockABI = func() int { return 0 }
	})
	st := e.waitState(t, "strict", backends.Failed)
	for _, want := range []string{"mode enforce cannot confine it as asked", "filesystem: the kernel has no Landlock", "network none"} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("strict's error %q lacks %q", st.Error, want)
		}
	}
	if st.Restarts != 0 {
		t.Errorf("strict was retried %d times; a refusal is not a crash", st.Restarts)
	}

	st = e.waitState(t, "lenient", backends.Ready)
	if st.Sandbox == nil || st.Sandbox.FS || st.Sandbox.NetworkEnforced || len(st.Sandbox.NotEnforced) != 2 ||
		!strings.Contains(st.Sandbox.NotEnforced[0], "no Landlock") || st.Sandbox.Summary() != "fs ✗ net all mem — procs —" {
		t.Errorf("lenient's sandbox: %+v", st.Sandbox)
	}
	// Unconfined, as it says, but in its own HOME.
	if text, failed := e.tool(t, "lenient", "read_file", map[string]string{"path": h.key}); failed {
		t.Errorf("best_effort without Landlock: %q", text)
	}
}

// BenchmarkSandboxStart is the start of one server (process, initialize,
// lists) unconfined, confined under enforce (network none: Landlock and
// a network namespace) and, where cgroups can be made, under enforce with
// memory and process limits (its cgroups made, joined and removed): the
// cost of the re-exec, the rules and the cgroups (the target: at
// most +20 ms at the median). One op is one start of each, in rotating
// order, so that the machine's load lands on all alike; the metrics are
// the medians over the ops and their ratio (use -benchtime=Nx for N
// samples).
func BenchmarkSandboxStart(b *testing.B) {
	h := newSandboxHome(b)
	confined := config.Sandbox{Mode: config.SandboxEnforce, Read: []string{h.notes}, Network: config.Network{Policy: "none"}}
	limited := confined
	limited.MemoryMB, limited.Processes = 512, 64
	start := func(sb config.Sandbox) time.Duration {
		opts := backends.Options{Servers: []config.Server{hostile("h", sb)}}
		h.options(&opts)
		t0 := time.Now()
		m := backends.New(opts)
		defer m.Close()
		m.Start(context.Background())
		m.Wait(context.Background(), 0)
		took := time.Since(t0)
		if st := m.Status()[0]; st.State != backends.Ready || sb.On() != (st.Sandbox != nil && st.Sandbox.FS) {
			b.Fatalf("%s: %s (sandbox %+v)", st.State, st.Error, st.Sandbox)
		}
		return took
	}
	kinds := []config.Sandbox{{}, confined}
	if backends.CgroupLimitsMissing() == "" {
		kinds = append(kinds, limited)
	}
	took := make([][]time.Duration, len(kinds))
	for i := 0; b.Loop(); i++ {
		for j := range kinds {
			k := (i + j) % len(kinds)
			took[k] = append(took[k], start(kinds[k]))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	o50, e50 := median(took[0]), median(took[1])
	b.ReportMetric(ms(o50), "off-p50-ms")
	b.ReportMetric(ms(e50), "enforce-p50-ms")
	b.ReportMetric(ms(e50-o50), "added-p50-ms")
	b.ReportMetric(float64(e50)/float64(o50), "p50-enforce/off")
	if len(kinds) == 3 {
		l50 := median(took[2])
		b.ReportMetric(ms(l50), "limits-p50-ms")
		b.ReportMetric(ms(l50-o50), "limits-added-p50-ms")
	}
}

// median is the middle of d, which it sorts.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// TestSandboxRefusesGatewayFiles: a read path that holds the gateway's
// config (here the whole home) is refused under best_effort too: the
// server is Failed at once, not retried (under restart: on-failure),
// and says why.
func TestSandboxRefusesGatewayFiles(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	s := hostile("greedy", config.Sandbox{Mode: config.SandboxBestEffort, Read: []string{filepath.Dir(h.config)}})
	s.Restart = "on-failure"
	e := start(t, []config.Server{s}, h.options)
	st := e.waitState(t, "greedy", backends.Failed)
	if !strings.Contains(st.Error, "would expose the gateway's "+h.config) || st.Restarts != 0 || st.PID != 0 {
		t.Errorf("greedy: %+v", st)
	}
}

// TestSandboxSkipsUnreachablePaths: a PATH entry the server could not
// reach anyway (here under a file; for another user, under a directory
// it may not search) is skipped, not a failure of the whole ruleset.
func TestSandboxSkipsUnreachablePaths(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	e := start(t, []config.Server{hostile("h", config.Sandbox{Mode: config.SandboxEnforce, Read: []string{filepath.Join(h.notes, "todo.txt", "sub")}})}, func(o *backends.Options) {
		h.options(o)
		o.Environ = append(o.Environ, "PATH="+os.Getenv("PATH")+":"+filepath.Join(h.key, "bin"))
	})
	if st := e.waitState(t, "h", backends.Ready); st.Sandbox == nil || !st.Sandbox.FS {
		t.Errorf("h: %+v", st.Sandbox)
	}
}

// TestSandboxSymlinkedPaths: Landlock grants what a path leads to, so a
// read or write path is checked through its symbolic links. A link to
// the home, or to a directory holding the gateway's config, is refused
// as the home or the config itself would be; a link inside a directory
// the server may write (one it could have made in an earlier run) that
// leads out of it is refused; a link to a harmless directory is granted
// as that directory.
func TestSandboxSymlinkedPaths(t *testing.T) {
	t.Parallel()
	link := func(t *testing.T, target, name string) string {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	for _, tc := range []struct {
		name  string
		sb    func(t *testing.T, h sandboxHome, dir string) config.Sandbox
		error string // "": the server runs
	}{
		{"to the home", func(t *testing.T, h sandboxHome, dir string) config.Sandbox {
			return config.Sandbox{Read: []string{link(t, h.home, filepath.Join(dir, "home"))}}
		}, "would expose the whole home directory"},
		{"to the config's directory's parent", func(t *testing.T, h sandboxHome, dir string) config.Sandbox {
			return config.Sandbox{Read: []string{link(t, filepath.Join(h.home, ".config"), filepath.Join(dir, "dotconfig"))}}
		}, "would expose the gateway's " + h0config},
		{"planted in a write path", func(t *testing.T, h sandboxHome, dir string) config.Sandbox {
			return config.Sandbox{Write: []string{h.notes}, Read: []string{link(t, filepath.Dir(h.key), filepath.Join(h.notes, "keys"))}}
		}, "through a symbolic link inside " + h0notes},
		{"to a harmless directory", func(t *testing.T, h sandboxHome, dir string) config.Sandbox {
			return config.Sandbox{Read: []string{link(t, h.notes, filepath.Join(dir, "notes"))}}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSandboxHome(t)
			sb := tc.sb(t, h, t.TempDir())
			sb.Mode = config.SandboxEnforce
			e := start(t, []config.Server{hostile("h", sb)}, h.options)
			if tc.error != "" {
				want := strings.NewReplacer(h0config, h.config, h0notes, h.notes).Replace(tc.error)
				if st := e.waitState(t, "h", backends.Failed); !strings.Contains(st.Error, want) {
					t.Errorf("error %q, want %q", st.Error, want)
				}
				return
			}
			e.waitState(t, "h", backends.Ready)
			if text, failed := e.tool(t, "h", "read_file", map[string]string{"path": filepath.Join(sb.Read[0], "todo.txt")}); failed || text != "buy milk" {
				t.Errorf("reading through the link: %q (error %v)", text, failed)
			}
			text, failed := e.tool(t, "h", "read_file", map[string]string{"path": h.key})
			denied(t, "reading ~/.ssh/id_rsa", text, failed)
		})
	}
}

// h0config and h0notes stand for a sandboxHome's paths in expectations
// written before the home is made.
const h0config, h0notes = "\x00config", "\x00notes"

// TestSandboxDropsCapabilities: a confined server has no capability,
// whoever runs the gateway. As root (how these tests run in CI) it had
// all of root's before: Landlock does not govern sethostname, mknod of
// a disk in its state directory, raw sockets or loading a module. Not
// as root the bounding set cannot be emptied and need not be
// (no_new_privs), and the other sets are checked.
func TestSandboxDropsCapabilities(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	e := start(t, []config.Server{
		hostile("all", config.Sandbox{Mode: config.SandboxEnforce}),
		hostile("none", config.Sandbox{Mode: config.SandboxEnforce, Network: config.Network{Policy: "none"}}),
	}, h.options)
	for _, name := range []string{"all", "none"} {
		e.waitState(t, name, backends.Ready)
		text, failed := e.tool(t, name, "read_file", map[string]string{"path": "/proc/self/status"})
		if failed {
			t.Fatalf("%s: reading its own status: %s", name, text)
		}
		sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
		if os.Geteuid() == 0 {
			sets = append(sets, "CapBnd")
		}
		for _, line := range strings.Split(text, "\n") {
			set, value, _ := strings.Cut(line, ":")
			if slices.Contains(sets, set) && strings.TrimSpace(value) != "0000000000000000" {
				t.Errorf("%s: %s %s, want none", name, set, strings.TrimSpace(value))
			}
		}
	}
}

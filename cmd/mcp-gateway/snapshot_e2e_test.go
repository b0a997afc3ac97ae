package main

// End-to-end tests of answering at once (docs/design.md, "Never in the
// way"): each backend's snapshot — what it looked like when last ready —
// answers a client's initialize and first lists while the backend starts;
// a backend never seen before gets first_start_wait_ms; a call waits only
// for its own backend.
//
// The tests set first_start_wait_ms to ten minutes where the point is that
// nothing waits: an answer at all, within the client's timeout, shows that
// the gateway did not wait for a backend that takes minutes or never
// starts. How fast the answer is belongs to BenchmarkColdWarmStart.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// snapshotHome is a HOME for gateways that share snapshots, and its
// snapshot directory.
func snapshotHome(t testing.TB) (home, dir string) {
	home = t.TempDir()
	none := func(string) (string, bool) { return "", false }
	return home, config.SnapshotDir(home, runtime.GOOS, none)
}

// homeEnv is baseEnv with HOME (USERPROFILE) home, and extra.
func homeEnv(t testing.TB, home string, extra ...string) []string {
	return baseEnv(t, append([]string{"HOME=" + home, "USERPROFILE=" + home}, extra...)...)
}

// startGate holds the n inherit_env testbackends of a gateway started with
// env before their handshake (testbackend's -start-barrier: each writes
// its pid file in a directory and waits for n+1 files there) until release
// is called: a backend that starts until the test says so, however slow
// the machine. A gate never released holds its backends until the gateway
// stops them.
func startGate(t *testing.T, n int) (env []string, release func()) {
	t.Helper()
	dir := t.TempDir()
	return []string{"TESTBACKEND_PID_DIR=" + dir, "TESTBACKEND_START_BARRIER=" + strconv.Itoa(n+1)}, func() {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// gatewayConfig writes a config of servers with these gateway settings.
func gatewayConfig(t *testing.T, gw map[string]any, servers ...beServer) string {
	t.Helper()
	gw["answer_tools"] = false
	b, err := json.MarshalIndent(map[string]any{"gateway": gw, "servers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return testutil.TempFile(t, "config.yaml", string(b))
}

// noWait is a first_start_wait_ms no test waits out.
const noWait = 600000

// A warm start: the first run (status) leaves a snapshot of each backend;
// the second answers initialize and tools/list from them while "slow" and
// "tardy" are held at their start (startGate) and "never" never starts,
// and a call to a tool of slow waits for slow alone and succeeds once it
// is let go.
func TestAnswerAtOnceFromSnapshot(t *testing.T) {
	t.Parallel()
	home, dir := snapshotHome(t)
	slow := tb("slow", "-instructions", "slow ones")
	slow.Inherit = true // startGate's environment reaches it, without changing its entry
	never := tb("never", "-start-delay", "10m")
	tardy := tb("tardy") // its calls' time runs out while it starts
	tardy.Inherit, tardy.TimeoutMS = true, 300
	servers := []beServer{tb("fast"), slow, never, tardy}

	// Both runs share one pin file: a snapshot shows only what the pins
	// know (docs/trust.md, "While a server starts").
	pins := filepath.Join(home, "pins.json")
	out, errOut, code := runCLIEnv(t, homeEnv(t, home), "status", "--wait", "3s", "--config", gatewayConfig(t, map[string]any{"pins": pins}, servers...))
	if code != 0 || !strings.Contains(out, "never") {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"fast", "slow", "never"} {
		if m, _ := filepath.Glob(filepath.Join(dir, name+"-*.json")); len(m) != 1 {
			t.Fatalf("snapshot of %s: %v", name, m)
		}
	}

	cfg := gatewayConfig(t, map[string]any{"first_start_wait_ms": noWait, "startup_timeout_ms": noWait, "pins": pins}, servers...)
	gate, release := startGate(t, 2) // slow and tardy
	s, init := initSession(t, startGateway(t, homeEnv(t, home, gate...), "--stdio", "--config", cfg), "e2e", `{}`)
	if got, _ := init.Result(t)["instructions"].(string); !strings.Contains(got, "## slow\n\nslow ones") {
		t.Errorf("instructions %q lack slow's, which its snapshot holds", got)
	}
	names := s.toolsList()
	wantTools(t, names, "fast.echo", "slow.echo")
	wantNoTools(t, names, "never.echo")
	code, msg, data := s.callTool("tardy.echo", `{}`).Error(t)
	if code != -32001 || msg != "Tool 'tardy.echo' timed out after 300ms: MCP server 'tardy' is still starting" || data["state"] != "starting" {
		t.Errorf("tardy.echo: %d %q %v", code, msg, data)
	}
	id := s.Request("tools/call", `{"name":"slow.echo","arguments":{"waited":true}}`)
	release()
	if sc := structuredContent(t, s.Await(id, testutil.DefaultTimeout)); sc["waited"] != true {
		t.Errorf("slow.echo = %v", sc)
	}
	// The live list is the snapshot's: no list_changed for slow's arrival.
	mark := s.Mark()
	s.structured("fast.echo", `{}`)
	if n := s.Since(mark, "notifications/tools/list_changed"); len(n) != 0 {
		t.Errorf("list_changed although nothing changed: %v", n)
	}
}

// A snapshot tool whose backend then fails to start fails at once with the
// backend's own error (its timeout is ten minutes), and leaves the list.
func TestSnapshotToolOfFailedBackend(t *testing.T) {
	t.Parallel()
	home, _ := snapshotHome(t)
	flaky := tb("flaky")
	flaky.Inherit = true
	flaky.Restart = "never"
	flaky.TimeoutMS = noWait
	cfg := gatewayConfig(t, map[string]any{"first_start_wait_ms": noWait}, tb("ok"), flaky)
	if out, errOut, code := runCLIEnv(t, homeEnv(t, home), "status", "--config", cfg); code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}

	s := startRaw(t, cfg, "e2e", "HOME="+home, "USERPROFILE="+home, "TESTBACKEND_FAIL_START=9")
	code, msg, data := s.callTool("flaky.echo", `{}`).Error(t)
	wantNotRunning(t, code, msg, data, "flaky", "failed", "exit status 9", "failing at start with 9")
	testutil.WaitFor(t, testutil.DefaultTimeout, "flaky's tools gone from the list", func() bool {
		return !slices.Contains(s.toolsList(), "flaky.echo")
	})
	if sc := s.structured("ok.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("ok.echo = %v", sc)
	}
}

// Where a backend's live list differs from its snapshot, a client that
// listed the snapshot gets list_changed, and then the live list.
func TestSnapshotDiffersListChanged(t *testing.T) {
	t.Parallel()
	home, _ := snapshotHome(t)
	grow := tb("grow")
	grow.Inherit = true
	cfg := gatewayConfig(t, map[string]any{"first_start_wait_ms": noWait}, grow)
	if out, errOut, code := runCLIEnv(t, homeEnv(t, home), "status", "--config", cfg); code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}

	gate, release := startGate(t, 1)
	s := startRaw(t, cfg, "e2e", append(gate, "HOME="+home, "USERPROFILE="+home, "TESTBACKEND_EXTRA_TOOLS=2")...)
	mark := s.Mark()
	names := s.toolsList()
	wantTools(t, names, "grow.echo")
	wantNoTools(t, names, "grow.extra_000")
	release()
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	wantTools(t, s.toolsList(), "grow.echo", "grow.extra_000", "grow.extra_001")
}

// The snapshot survives the gateway; a corrupt or truncated file is
// ignored with a warning, and a changed entry finds none: both start cold.
func TestSnapshotSurvivesCorruptAndChanged(t *testing.T) {
	t.Parallel()
	home, dir := snapshotHome(t)
	entry := tb("tb")
	entry.Inherit = true
	gw := map[string]any{"first_start_wait_ms": 0}
	cfg := gatewayConfig(t, gw, entry)
	if out, errOut, code := runCLIEnv(t, homeEnv(t, home), "status", "--config", cfg); code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "tb-*.json"))
	if len(files) != 1 {
		t.Fatalf("snapshots: %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// listed reports whether tb's tools are in the first list of a
	// gateway on cfg whose tb is held at its start until release
	// (first_start_wait_ms: 0): they can only come from a snapshot.
	listed := func(cfg string) (ok bool, s *proc, release func()) {
		gate, release := startGate(t, 1)
		s = startRaw(t, cfg, "e2e", append(gate, "HOME="+home, "USERPROFILE="+home)...)
		return slices.Contains(s.toolsList(), "tb.echo"), s, release
	}
	if ok, _, _ := listed(cfg); !ok {
		t.Errorf("a second gateway does not list tb from its snapshot")
	}
	var release func()
	for _, bad := range [][]byte{good[:len(good)/2], []byte("not json"), {}} {
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		var ok bool
		var s *proc
		ok, s, release = listed(cfg)
		if ok {
			t.Errorf("listed tb from a corrupt snapshot (%d bytes)", len(bad))
		}
		testutil.WaitFor(t, testutil.DefaultTimeout, "the warning", func() bool {
			return strings.Contains(s.Stderr.String(), "ignored the backend's snapshot")
		})
	}
	// tb becomes ready in the last run and writes its snapshot again; an
	// edited entry is another server.
	release()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the snapshot written again", func() bool {
		b, err := os.ReadFile(files[0])
		return err == nil && string(b) == string(good)
	})
	edited := entry
	edited.Args = []string{"-name", "edited"}
	if ok, _, _ := listed(gatewayConfig(t, gw, edited)); ok {
		t.Errorf("listed tb from the snapshot of its entry before an edit")
	}
}

// Lazy mode waits for no backend: initialize and tools/list are answered
// while a backend never seen before has not started (ten-minute wait).
func TestLazyNeverWaits(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig(t, map[string]any{"tools_mode": "lazy", "first_start_wait_ms": noWait, "startup_timeout_ms": noWait},
		tb("never", "-start-delay", "10m"))
	s := startRaw(t, cfg, "e2e")
	wantTools(t, s.toolsList(), "gateway.find_tools", "gateway.call_tool")
}

// A command that cannot run is failed at once, not retried; tools and
// status exit 1 when every backend failed; with one ready, tools exits 0
// and status 1, naming the one that is not.
func TestUnrunnableFailsAndExitCodes(t *testing.T) {
	t.Parallel()
	missing := beServer{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")}
	notExec := beServer{Name: "notexec", Command: testutil.TempFile(t, "plain.txt", "not a program")}
	cfg := gatewayConfig(t, map[string]any{}, missing, notExec)
	for _, cmd := range []string{"status", "tools"} {
		out, errOut, code := runCLI(t, cmd, "--json", "--config", cfg)
		if code != 1 || !strings.Contains(errOut, "every backend failed to start") {
			t.Errorf("%s: exit %d, want 1\n%s\n%s", cmd, code, out, errOut)
		}
		var st struct {
			Servers []struct{ Name, State, Error string }
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%s --json: %v\n%s", cmd, err, out)
		}
		for _, s := range st.Servers {
			if s.State != "failed" || !strings.Contains(s.Error, "start ") {
				t.Errorf("%s: %s is %s (%s), want failed", cmd, s.Name, s.State, s.Error)
			}
		}
	}
	cfg = gatewayConfig(t, map[string]any{}, missing, tb("ok"))
	out, errOut, code := runCLI(t, "status", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "not ready: missing (failed)") {
		t.Errorf("status with one ready backend and one failed: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "tools", "--config", cfg); code != 0 {
		t.Errorf("tools with one ready backend: exit %d\n%s\n%s", code, out, errOut)
	}
}

// `status --wait` reports a backend still starting with its elapsed time
// and says on stderr what it waits for; without --wait it waits for the
// start to conclude, however long (within start_limit_ms).
func TestStatusWaitsForStarts(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig(t, map[string]any{}, tb("fast"), tb("slow", "-start-delay", "4s"))
	out, errOut, code := runCLI(t, "status", "--config", cfg)
	if code != 0 || !strings.Contains(out, "slow") || strings.Contains(out, "starting") {
		t.Errorf("status: exit %d; want slow ready\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "still starting: slow (") {
		t.Errorf("status says nothing of what it waits for:\n%s", errOut)
	}
	out, _, _ = runCLI(t, "tools", "--wait", "1s", "--config", cfg)
	if !strings.Contains(out, "not ready: slow (starting ") {
		t.Errorf("tools --wait 1s:\n%s", out)
	}
}

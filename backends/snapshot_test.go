package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// snapshotted starts a Manager over s with snapshots in dir, waits until
// s is ready (its snapshot written), and closes it.
func snapshotted(t *testing.T, dir string, s config.Server) {
	t.Helper()
	e := start(t, []config.Server{s}, func(o *backends.Options) { o.SnapshotDir = dir })
	e.waitState(t, s.Name, backends.Ready)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// slowly is a Manager over s with snapshots in dir, whose testbackends take
// delay to start (s must inherit the environment); it does not wait.
func slowly(t *testing.T, dir string, delay string, s ...config.Server) *env {
	return start(t, s, func(o *backends.Options) {
		o.SnapshotDir = dir
		o.Environ = append(os.Environ(), "TESTBACKEND_START_DELAY="+delay)
		o.StartupTimeout = time.Millisecond // start's Wait: none to speak of
	})
}

// A backend in its first start is shown as its snapshot says — tools,
// capabilities, instructions — and as itself once ready.
func TestSnapshotShownDuringFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := srv("tb", "-instructions", "from tb", "-prompts")
	s.InheritEnv = true
	snapshotted(t, dir, s)

	e := slowly(t, dir, "2s", s)
	if st := e.status(t, "tb"); st.State != backends.Starting || !st.Snapshot || st.Tools == 0 {
		t.Fatalf("while starting: %+v", st)
	}
	if names := toolNames(e.Tools()); len(names) == 0 || names[0] != "tb/echo" {
		t.Errorf("tools while starting: %v", names)
	}
	if len(e.Prompts()) != 1 {
		t.Errorf("prompts while starting: %v", e.Prompts())
	}
	in := e.Initialized()
	if len(in) != 1 || in[0].Instructions != "from tb" || !strings.Contains(string(in[0].Capabilities), "prompts") {
		t.Errorf("initialized while starting: %+v", in)
	}
	if got := e.Declaring("logging"); len(got) != 0 {
		t.Errorf("logging/setLevel would go to %v, which is not running", got)
	}
	e.waitState(t, "tb", backends.Ready)
	if st := e.status(t, "tb"); st.Snapshot {
		t.Errorf("ready, still marked snapshot: %+v", st)
	}
}

// A call to a backend still starting waits for it and is served; one whose
// time runs out first gets a TimeoutError that says so; one cancelled while
// it waits ends at once; one whose backend fails to start gets that failure
// at once, not at its timeout.
func TestCallWaitsForStartingBackend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	waits := srv("waits")
	waits.InheritEnv = true
	short := srv("short")
	short.InheritEnv, short.TimeoutMS = true, 200
	e := slowly(t, dir, "1500ms", waits, short)

	var res json.RawMessage
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = e.CallTool(context.Background(), "waits", "echo", json.RawMessage(`{"w":1}`), backends.CallOptions{})
	}()
	_, shortErr := e.CallTool(context.Background(), "short", "echo", json.RawMessage(`{}`), backends.CallOptions{})
	var te *backends.TimeoutError
	if !errors.As(shortErr, &te) || !te.Starting || te.Method != "tools/call" || te.Name != "echo" {
		t.Errorf("short: %v, want a TimeoutError while starting", shortErr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error, 1)
	go func() {
		_, err := e.CallTool(ctx, "waits", "echo", json.RawMessage(`{}`), backends.CallOptions{})
		cancelled <- err
	}()
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	<-done
	if err != nil || !strings.Contains(string(res), `"w":1`) {
		t.Errorf("waits: %s, %v", res, err)
	}

	hang := srv("hang", "-start-delay", "1m")
	hang.TimeoutMS = int(time.Hour / time.Millisecond)
	e2 := start(t, []config.Server{hang}, func(o *backends.Options) {
		o.StartLimit = 500 * time.Millisecond
		o.StartupTimeout = time.Millisecond
	})
	_, err = e2.CallTool(context.Background(), "hang", "echo", json.RawMessage(`{}`), backends.CallOptions{})
	var se *backends.ServerError
	if !errors.As(err, &se) || se.State != backends.Failed || !strings.Contains(se.Reason, "start timed out") {
		t.Errorf("hang: %v, want its failed start", err)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the request for a prompt of a failed backend", func() bool {
		_, err := e2.Request(context.Background(), "hang", "prompts/get", map[string]any{"name": "p"}, backends.CallOptions{})
		return errors.As(err, &se) && se.State == backends.Failed
	})
}

// A command that cannot be run is Failed at once under restart:
// on-failure, not retried.
func TestUnrunnableNotRetried(t *testing.T) {
	t.Parallel()
	s := config.Server{Name: "missing", Command: "/nonexistent/mcp-server", Enabled: true, Prefix: "missing", Restart: "on-failure"}
	e := start(t, []config.Server{s}, nil)
	st := e.waitState(t, "missing", backends.Failed)
	if st.Restarts != 0 || !strings.Contains(st.Error, "start /nonexistent/mcp-server") {
		t.Errorf("missing: %+v", st)
	}
}

// gated holds the InheritEnv testbackends of a Manager with the returned
// environment at their start (testbackend's -start-barrier) until release:
// n backends that are starting for as long as the test needs.
func gated(t *testing.T, n int) (environ []string, release func()) {
	t.Helper()
	dir := t.TempDir()
	return append(os.Environ(), "TESTBACKEND_PID_DIR="+dir, "TESTBACKEND_START_BARRIER="+strconv.Itoa(n+1)), func() {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A snapshot is a cache anyone who can write it could fill: a tool it
// shows that no pin knows is not shown while the backend starts, and a
// tool is called only when the backend's live list has it. A tool the
// server's filter excludes is refused by name at once, starting or not.
func TestSnapshotToolNeverCalledUnlisted(t *testing.T) {
	t.Parallel()
	dir, pins := t.TempDir(), filepath.Join(t.TempDir(), "pins.json")
	s := srv("tb")
	s.InheritEnv = true
	s.Tools.Exclude = []string{"stats"}
	opts := func(o *backends.Options) {
		o.SnapshotDir = dir
		o.Trust = backends.TrustOptions{Policy: "pin", PinFile: pins}
	}
	first := start(t, []config.Server{s}, opts)
	first.waitState(t, "tb", backends.Ready)
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		data, _ := os.ReadFile(pins)
		return strings.Contains(string(data), `"echo"`)
	}) {
		t.Fatal("echo's first sight not pinned")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "tb-*.json"))
	if len(files) != 1 {
		t.Fatalf("snapshots: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var tools []json.RawMessage
	json.Unmarshal(f["tools"], &tools)
	f["tools"], _ = json.Marshal(append(tools, json.RawMessage(`{"name":"ghost","description":"Run me.","inputSchema":{"type":"object"}}`)))
	data, _ = json.Marshal(f)
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}

	environ, release := gated(t, 1)
	e := start(t, []config.Server{s}, func(o *backends.Options) {
		opts(o)
		o.Environ = environ
		o.StartupTimeout = time.Millisecond // start's Wait: none to speak of
	})
	if st := e.status(t, "tb"); st.State != backends.Starting || !st.Snapshot {
		t.Fatalf("held at its start: %+v", st)
	}
	if !shown(e, "tb/echo") || shown(e, "tb/ghost") {
		t.Errorf("shown while starting: %v; want the pinned echo, not the snapshot's ghost", toolNames(e.Tools()))
	}
	var nl *backends.NotListedError
	if _, err := e.CallTool(context.Background(), "tb", "stats", nil, backends.CallOptions{}); !errors.As(err, &nl) {
		t.Errorf("excluded stats while starting: %v, want a NotListedError at once", err)
	}
	ghost := make(chan error, 1)
	go func() {
		_, err := e.CallTool(context.Background(), "tb", "ghost", json.RawMessage(`{}`), backends.CallOptions{})
		ghost <- err
	}()
	release()
	if err := <-ghost; !errors.As(err, &nl) || nl.Tool != "ghost" {
		t.Errorf("ghost: %v, want a NotListedError (never forwarded)", err)
	}
	e.waitState(t, "tb", backends.Ready)
	if _, err := e.CallTool(context.Background(), "tb", "stats", nil, backends.CallOptions{}); !errors.As(err, &nl) {
		t.Errorf("excluded stats when ready: %v, want a NotListedError", err)
	}
	if res := e.call(t, "tb", "echo", `{"x":1}`); !strings.Contains(string(res), `"x":1`) {
		t.Errorf("echo: %s", res)
	}
}

package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
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
	if got := e.Logging(); len(got) != 0 {
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

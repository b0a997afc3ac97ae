package backends_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The odd tool's results, as testbackend writes them.
const (
	odd      = `{ "content": [ {"type":"hologram","data":"AAEC","extra":{"k":[1,2.50,3e2]}}, {"type":"text","text":"caf\u00e9 <&> \u2028"} ], "structuredContent": {"big":12345678901234567890123,"neg":-98765432109876543210,"exp":1E+400,"nested":{"id":9007199254740993}}, "_meta": {"example.com/trace":"t-1","n":18446744073709551616} }`
	oddError = `{"content":[{"type":"text","text":"it failed"}],"isError":true,"structuredContent":{"code":12345678901234567890123},"_meta":{"k":null}}`
)

var baseTools = []string{"echo", "crash", "hang", "slow", "progress", "big", "odd", "change", "sample", "log", "stats", "deaf"}

// TestStartParallel: the backends start at once. Each waits, before it
// answers initialize, until all n have started (testbackend's
// -start-barrier): started one after the other, none would become ready.
func TestStartParallel(t *testing.T) {
	t.Parallel()
	const n = 8
	dir := t.TempDir()
	var servers []config.Server
	for i := range n {
		servers = append(servers, srv(fmt.Sprintf("s%d", i), "-pid-dir", dir, "-start-barrier", strconv.Itoa(n)))
	}
	e := start(t, servers, nil)
	for _, s := range e.Status() {
		if s.State != backends.Ready {
			t.Errorf("%s: %s %s", s.Name, s.State, s.Error)
		}
		if s.PID == 0 || s.StartedAt.IsZero() || s.Tools != len(baseTools) || s.ServerInfo == nil || s.ServerInfo.Name != "testbackend" {
			t.Errorf("status %+v", s)
		}
	}
	if got := len(e.Tools()); got != n*len(baseTools) {
		t.Errorf("%d tools, want %d", got, n*len(baseTools))
	}
}

func TestToolsPagingAndOrder(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("a", "-extra-tools", "25", "-page-size", "4"), srv("b")}, nil)
	var want []string
	for _, n := range baseTools {
		want = append(want, "a/"+n)
	}
	for i := range 25 {
		want = append(want, fmt.Sprintf("a/extra_%03d", i))
	}
	for _, n := range baseTools {
		want = append(want, "b/"+n)
	}
	if got := toolNames(e.Tools()); !slices.Equal(got, want) {
		t.Errorf("tools\n got %v\nwant %v", got, want)
	}
	raw := e.Tools()[0].Raw
	if string(raw) != `{"name":"echo","description":"testbackend tool echo","inputSchema":{"type":"object"}}` {
		t.Errorf("raw tool %s", raw)
	}
}

func TestToolFilter(t *testing.T) {
	t.Parallel()
	s := srv("f", "-extra-tools", "3")
	s.Tools = config.ToolFilter{Include: []string{"s*", "e*", "[bad"}, Exclude: []string{"slow", "extra_00[12]"}}
	e := start(t, []config.Server{s}, nil)
	want := []string{"f/echo", "f/sample", "f/stats", "f/extra_000"}
	if got := toolNames(e.Tools()); !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}

// A tool whose x-mcp-header marks are invalid is left out of the lists
// (a client of 2026-07-28 must not call it): the others stay.
func TestInvalidHeaderMarksLeftOut(t *testing.T) {
	t.Parallel()
	tools := filepath.Join(t.TempDir(), "tools.json")
	schema := func(props string) string { return `{"inputSchema":{"type":"object","properties":` + props + `}}` }
	defs := map[string]string{
		"valid":        schema(`{"region":{"type":"string","x-mcp-header":"Region"},"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}`),
		"empty":        schema(`{"v":{"type":"string","x-mcp-header":""}}`),
		"number":       schema(`{"v":{"type":"number","x-mcp-header":"V"}}`),
		"object":       schema(`{"v":{"type":"object","x-mcp-header":"V"}}`),
		"not_a_string": schema(`{"v":{"type":"string","x-mcp-header":7}}`),
		"colon":        schema(`{"v":{"type":"string","x-mcp-header":"A:B"}}`),
		"non_ascii":    schema(`{"v":{"type":"string","x-mcp-header":"Zürich"}}`),
		"twice":        schema(`{"a":{"type":"string","x-mcp-header":"Same"},"b":{"type":"object","properties":{"c":{"type":"boolean","x-mcp-header":"same"}}}}`),
	}
	var b strings.Builder
	b.WriteString(`{"tools":{`)
	for name, def := range defs {
		if b.Len() > len(`{"tools":{`) {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", name, def)
	}
	b.WriteString(`}}`)
	if err := os.WriteFile(tools, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, []config.Server{srv("h", "-tools-file", tools)}, nil)
	var got []string
	for _, tl := range e.Tools() {
		if _, ok := defs[tl.Name]; ok {
			got = append(got, tl.Name)
		}
	}
	if !slices.Equal(got, []string{"valid"}) {
		t.Errorf("tools of the file listed: %v, want [valid]", got)
	}
	for name := range defs {
		if name != "valid" && len(e.log.Find("x-mcp-header marks are invalid", "tool="+name)) == 0 {
			t.Errorf("no log line for %s", name)
		}
	}
}

func TestSlowStartAndWait(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("slow", "-start-delay", "300ms"), srv("fast")}, nil)
	// Wait returned (in start) once both were ready, not when the fast one was.
	if st := e.status(t, "slow"); st.State != backends.Ready {
		t.Errorf("Wait returned with the slow backend %s", st.State)
	}
	e.call(t, "slow", "echo", `{}`)
}

func TestStartFailureIsolated(t *testing.T) {
	t.Parallel()
	bad := srv("bad", "-fail-start", "7")
	bad.Restart = "never" // a failed first start is not retried
	missing := srv("missing")
	missing.Command = "/nonexistent/mcp-server"
	missing.Restart = "never"
	e := start(t, []config.Server{bad, missing, srv("good")}, nil)
	st := e.status(t, "bad")
	if st.State != backends.Failed || !strings.Contains(st.Error, "exit status 7") {
		t.Errorf("bad: %s %q", st.State, st.Error)
	}
	if !slices.Contains(st.StderrTail, "failing at start with 7") {
		t.Errorf("bad: stderr tail %q", st.StderrTail)
	}
	// Where exec runs the path it says "no such file or directory"; on
	// Windows it looks for the file with each PATHEXT extension and says
	// "executable file not found".
	notFound := "no such file"
	if runtime.GOOS == "windows" {
		notFound = exec.ErrNotFound.Error()
	}
	if st := e.status(t, "missing"); st.State != backends.Failed || !strings.Contains(st.Error, notFound) {
		t.Errorf("missing: %s %q", st.State, st.Error)
	}
	e.call(t, "good", "echo", `{}`)
	_, err := e.CallTool(context.Background(), "bad", "echo", nil, backends.CallOptions{})
	var se *backends.ServerError
	if !errors.As(err, &se) || se.State != backends.Failed || se.Server != "bad" || !strings.Contains(se.Reason, "exit status 7") {
		t.Errorf("call to failed backend: %#v", err)
	}
	if err.Error() != "MCP server 'bad' is not running" {
		t.Errorf("message %q", err)
	}
	time.Sleep(50 * time.Millisecond) // no retry comes (a negative check: time must pass)
	if st := e.status(t, "bad"); st.State != backends.Failed || st.Restarts != 0 {
		t.Errorf("bad after a while: %+v", st)
	}
}

// TestFailedStartRetried: under restart: on-failure a start that fails is
// retried with the crash backoff until the crash limit gives up.
func TestFailedStartRetried(t *testing.T) {
	t.Parallel()
	bad := srv("bad", "-fail-start", "7")
	bad.Restart = "on-failure"
	e := start(t, []config.Server{bad}, nil)
	st := e.waitState(t, "bad", backends.Failed)
	if !strings.Contains(st.Error, "gave up after 5 crashes") || !strings.Contains(st.Error, "exit status 7") || st.Restarts != 4 {
		t.Errorf("bad: %+v", st)
	}
}

// TestStartupTimeoutStopsOnlyTheWait: the startup timeout bounds Wait; the
// slow backend keeps starting and becomes ready later, with Hooks.Changed.
func TestStartupTimeoutStopsOnlyTheWait(t *testing.T) {
	t.Parallel()
	// A Wait that waited for the late backend (3 s, ten times the startup
	// timeout) would see it Ready; no clock is read.
	e := start(t, []config.Server{srv("late", "-start-delay", "3s"), srv("ok")}, func(o *backends.Options) {
		o.StartupTimeout = 300 * time.Millisecond
	})
	// Starting, its process started or not yet: under Wine on a busy
	// machine creating it alone took longer than the timeout (PID 0).
	if st := e.status(t, "late"); st.State != backends.Starting {
		t.Errorf("late after the startup timeout: %+v", st)
	}
	e.waitState(t, "ok", backends.Ready)
	e.waitChange(t, "late")
	e.call(t, "late", "echo", `{}`)
}

// TestStartLimit: a start slower than StartLimit fails (and, under restart:
// never, stays Failed).
func TestStartLimit(t *testing.T) {
	t.Parallel()
	late := srv("late", "-start-delay", "20s")
	late.Restart = "never"
	e := start(t, []config.Server{late}, func(o *backends.Options) {
		o.StartupTimeout = 100 * time.Millisecond
		o.StartLimit = 300 * time.Millisecond
	})
	st := e.waitState(t, "late", backends.Failed)
	if !strings.Contains(st.Error, ": start timed out after 300ms (gateway.start_limit_ms)") {
		t.Errorf("reason %q", st.Error)
	}
}

func TestRemoteAndDisabled(t *testing.T) {
	t.Parallel()
	off := srv("off")
	off.Enabled = false
	// Nothing listens on port 1: the connection is refused at once.
	remote := config.Server{Name: "remote", URL: "http://127.0.0.1:1/mcp", Enabled: true, Restart: "never"}
	e := start(t, []config.Server{off, remote}, nil)
	if st := e.status(t, "off"); st.State != backends.Disabled || st.PID != 0 {
		t.Errorf("off: %+v", st)
	}
	// The OS's own words for a refused connection (Windows has its own).
	_, refused := net.Dial("tcp", "127.0.0.1:1")
	var sys *os.SyscallError
	if !errors.As(refused, &sys) {
		t.Fatalf("dial 127.0.0.1:1: %v", refused)
	}
	if st := e.waitState(t, "remote", backends.Failed); !strings.Contains(st.Error, sys.Err.Error()) {
		t.Errorf("remote: %+v, want %q", st, sys.Err)
	}
	_, err := e.CallTool(context.Background(), "nope", "x", nil, backends.CallOptions{})
	var se *backends.ServerError
	if !errors.As(err, &se) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestChattyStdout(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("chatty", "-banner", "3", "-chatty-stdout")}, nil)
	for range 3 {
		e.call(t, "chatty", "echo", `{"a":1}`)
	}
	if got := e.log.Find("level=WARN", "non-JSON", "server=chatty", "Banner line 0"); len(got) != 1 {
		t.Errorf("banner warnings: %q", got)
	}
	if got := e.log.Find("level=WARN", "non-JSON", "npm notice"); len(got) < 3 {
		t.Errorf("npm notice warnings: %d", len(got))
	}
}

func TestStderrTailAndLog(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("noisy", "-stderr-lines", "30")}, nil)
	tail := e.status(t, "noisy").StderrTail
	if len(tail) != 20 || tail[0] != "stderr line 10" || tail[19] != "stderr line 29" {
		t.Errorf("tail %q", tail)
	}
	if got := e.log.Find(`level=INFO msg="stderr line 29"`, "server=noisy"); len(got) != 1 {
		t.Errorf("stderr log %q", got)
	}
}

func TestChattyStderrNeverBlocks(t *testing.T) {
	t.Parallel()
	// ~50 KB of stderr per request: a child whose stderr is not drained
	// would block after a couple of calls.
	e := start(t, []config.Server{srv("loud", "-chatty-stderr", "2000")}, func(o *backends.Options) { o.Logger = nil })
	for range 10 {
		e.call(t, "loud", "echo", `{}`)
	}
}

func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("c"), srv("other")}, nil)
	// An unrelated call in flight on the same backend fails too.
	hangErr := make(chan error, 1)
	go func() {
		_, err := e.CallTool(context.Background(), "c", "hang", nil, backends.CallOptions{})
		hangErr <- err
	}()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the hang call sent", func() bool { return backends.InFlight(e.Manager, "c") > 0 })
	_, err := e.CallTool(context.Background(), "c", "crash", json.RawMessage(`{"code":3}`), backends.CallOptions{})
	var se *backends.ServerError
	if !errors.As(err, &se) || se.State != backends.Crashed || se.Reason != "exit status 3" {
		t.Fatalf("crash call: %#v", err)
	}
	if err.Error() != "MCP server 'c' crashed: exit status 3" {
		t.Errorf("message %q", err)
	}
	if !slices.Contains(se.StderrTail, "crashing now (2)") {
		t.Errorf("stderr tail %q", se.StderrTail)
	}
	select {
	case err := <-hangErr:
		if !errors.As(err, &se) || se.State != backends.Crashed {
			t.Errorf("hang call: %v", err)
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("in-flight hang call did not fail") // it never would: hang never answers
	}
	e.waitChange(t, "c")
	st := e.waitState(t, "c", backends.Crashed)
	if st.Error != "exit status 3" {
		t.Errorf("status %+v", st)
	}
	for _, tl := range e.Tools() {
		if tl.Server == "c" {
			t.Fatalf("crashed backend's tools still listed: %v", toolNames(e.Tools()))
		}
	}
	_, err = e.CallTool(context.Background(), "c", "echo", nil, backends.CallOptions{})
	if !errors.As(err, &se) || se.State != backends.Crashed || se.Reason != "exit status 3" {
		t.Errorf("call after crash: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // restart: never (a negative check: time must pass)
	if st := e.status(t, "c"); st.State != backends.Crashed || st.Restarts != 0 || st.PID != 0 {
		t.Errorf("after a while: %+v", st)
	}
	e.call(t, "other", "echo", `{}`)
}

func TestRestartOnFailureAndGiveUp(t *testing.T) {
	t.Parallel()
	s := srv("r")
	s.Restart = "on-failure"
	e := start(t, []config.Server{s}, nil)
	for i := 1; i <= 4; i++ {
		pid := e.status(t, "r").PID
		_, err := e.CallTool(context.Background(), "r", "crash", nil, backends.CallOptions{})
		var se *backends.ServerError
		if !errors.As(err, &se) || se.State != backends.Crashed {
			t.Fatalf("crash %d: %v", i, err)
		}
		st := e.waitState(t, "r", backends.Ready)
		if st.Restarts != i || st.PID == pid {
			t.Fatalf("after crash %d: %+v", i, st)
		}
		e.call(t, "r", "echo", `{}`)
	}
	// The fifth crash within the window gives up.
	e.CallTool(context.Background(), "r", "crash", nil, backends.CallOptions{})
	st := e.waitState(t, "r", backends.Failed)
	if !strings.Contains(st.Error, "gave up after 5 crashes") || !strings.Contains(st.Error, "exit status 3") {
		t.Errorf("status %+v", st)
	}
	time.Sleep(100 * time.Millisecond) // no sixth start comes (a negative check: time must pass)
	if st := e.status(t, "r"); st.State != backends.Failed || st.Restarts != 4 {
		t.Errorf("after giving up: %+v", st)
	}
}

// TestTimeoutAtDeadline: a call the backend never answers ends with a
// TimeoutError (hang never answers: the error comes from the deadline,
// not the backend). That it comes at the deadline, not before and not
// after a grace, is checked on synctest's clock by the wire script
// gateway/testdata/scripts/fixed-timeout-cancellation-after-request.txtar
// (nothing at 4.9 s, the error at 5 s).
func TestTimeoutAtDeadline(t *testing.T) {
	t.Parallel()
	s := srv("h")
	s.TimeoutMS = 200
	e := start(t, []config.Server{s}, nil)
	_, err := e.CallTool(context.Background(), "h", "hang", nil, backends.CallOptions{})
	var te *backends.TimeoutError
	if !errors.As(err, &te) || te.Server != "h" || te.Method != "tools/call" || te.Name != "hang" || te.Timeout != 200*time.Millisecond {
		t.Fatalf("err %#v", err)
	}
	if err.Error() != "MCP server 'h' tools/call timed out after 200ms" {
		t.Errorf("message %q", err)
	}
	// The backend was told (the notification is sent after the error is
	// returned, so it may trail the next request), and still serves.
	st := e.waitCancelled(t, "h")
	if len(st.Cancelled) != 1 || st.Reasons[0] != "timeout" {
		t.Errorf("backend saw cancellations %s %q", st.Cancelled, st.Reasons)
	}
	if e.status(t, "h").State != backends.Ready {
		t.Error("backend not ready after a timeout")
	}
}

// TestTimeoutWhileStdinFull: a child that stops reading its stdin cannot
// hold a call past its deadline, even while the request is being written.
func TestTimeoutWhileStdinFull(t *testing.T) {
	t.Parallel()
	s := srv("deaf")
	s.TimeoutMS = 200
	e := start(t, []config.Server{s}, nil)
	// Deaf for an hour: a call that returns at all was ended by its
	// timeout (200 ms), not by the pipe draining. The call that makes it
	// deaf may itself time out on a busy machine: it is read all the same.
	if _, err := e.CallTool(context.Background(), "deaf", "deaf", json.RawMessage(`{"ms":3600000}`), backends.CallOptions{}); err != nil {
		var te *backends.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("deaf: %v", err)
		}
	}
	big := json.RawMessage(`{"s":"` + strings.Repeat("x", 1<<20) + `"}`)
	for range 2 { // the first may be cut short; the second waits for the pipe
		_, err := e.CallTool(context.Background(), "deaf", "echo", big, backends.CallOptions{})
		var te *backends.TimeoutError
		var se *backends.ServerError
		if !errors.As(err, &te) && !errors.As(err, &se) {
			t.Fatalf("err %v", err)
		}
	}
}

func TestDefaultTimeoutAndRequestTimeout(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("d", "-prompts")}, func(o *backends.Options) { o.DefaultTimeout = 100 * time.Millisecond })
	_, err := e.CallTool(context.Background(), "d", "slow", json.RawMessage(`{"ms":5000}`), backends.CallOptions{})
	var te *backends.TimeoutError
	if !errors.As(err, &te) || te.Timeout != 100*time.Millisecond {
		t.Errorf("err %v", err)
	}
}

func TestLateResponseIgnored(t *testing.T) {
	t.Parallel()
	s := srv("late", "-ignore-cancel")
	s.TimeoutMS = 50
	e := start(t, []config.Server{s}, nil)
	_, err := e.CallTool(context.Background(), "late", "slow", json.RawMessage(`{"ms":150}`), backends.CallOptions{})
	var te *backends.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err %v", err)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the late response logged", func() bool {
		return len(e.log.Find(`level=DEBUG msg="ignored a response to an unknown id"`, "server=late")) > 0
	})
	// The session still serves (without the 50 ms bound, which a busy
	// machine may miss).
	if _, err := e.Request(context.Background(), "late", "tools/list", nil, backends.CallOptions{Unbounded: true}); err != nil {
		t.Fatalf("tools/list after the late response: %v", err)
	}
}

func TestContextCancellationForwarded(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("x")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancels once the call is at the backend
		testutil.Poll(testutil.DefaultTimeout, func() bool { return backends.InFlight(e.Manager, "x") > 0 || ctx.Err() != nil })
		cancel()
	}()
	// An hour's call that returns at all was ended by the cancellation.
	_, err := e.CallTool(ctx, "x", "slow", json.RawMessage(`{"ms":3600000}`), backends.CallOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	st := e.waitCancelled(t, "x")
	if len(st.Cancelled) != 1 || st.Reasons[0] == "timeout" {
		t.Errorf("cancellations %s %q", st.Cancelled, st.Reasons)
	}
}

func TestProgressAndMeta(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("p")}, nil)
	var (
		mu  sync.Mutex
		got []mcp.ProgressNotificationParams
	)
	opts := backends.CallOptions{
		Progress: func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			got = append(got, *p)
			mu.Unlock()
		},
		Meta: map[string]any{"client/key": "v"},
	}
	res, err := e.CallTool(context.Background(), "p", "progress", json.RawMessage(`{"steps":3,"ms":1}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), `"done"`) {
		t.Errorf("result %s", res)
	}
	mu.Lock()
	if len(got) != 3 {
		t.Fatalf("progress %+v", got)
	}
	for i, p := range got {
		if p.ProgressToken != nil || p.Progress != float64(i+1) || p.Total != 3 || p.Message != fmt.Sprintf("step %d", i+1) {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
	mu.Unlock()
	var meta map[string]any
	json.Unmarshal(e.stats(t, "p").Meta, &meta)
	if tok, _ := meta["progressToken"].(string); meta["client/key"] != "v" || !strings.HasPrefix(tok, "gw-") {
		t.Errorf("backend saw _meta %v", meta)
	}
	// Request (prompts/get) with meta: params' own _meta merged.
	e2 := start(t, []config.Server{srv("q", "-prompts", "-resources")}, nil)
	if _, err := e2.Request(context.Background(), "q", "prompts/get", map[string]any{"name": "greet", "_meta": map[string]any{"own": 1}}, backends.CallOptions{Meta: map[string]any{"c": 2}}); err != nil {
		t.Fatal(err)
	}
}

func TestListChangedRefresh(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("lc")}, nil)
	e.waitChange(t, "lc") // became ready
	before := len(e.Tools())
	e.call(t, "lc", "change", "")
	e.waitChange(t, "lc")
	names := toolNames(e.Tools())
	if len(names) != before+1 || names[len(names)-1] != "lc/added_1" {
		t.Errorf("tools after list_changed: %v", names)
	}
	e.call(t, "lc", "added_1", `{}`)
}

func TestOddResultsByteIdentical(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("o")}, nil)
	if got := e.call(t, "o", "odd", ""); string(got) != odd {
		t.Errorf("odd\n got %s\nwant %s", got, odd)
	}
	if got := e.call(t, "o", "odd", `{"isError":true}`); string(got) != oddError {
		t.Errorf("odd error\n got %s\nwant %s", got, oddError)
	}
	// Arguments go out as received (pretty-printed ones are compacted, since
	// the wire is one line per message; numbers and escapes are untouched).
	args := "{\n  \"n\": 12345678901234567890123,\n  \"s\": \"<&>\\u2028\"\n}"
	got := e.call(t, "o", "echo", args)
	want := `{"content":[{"type":"text","text":"{\"n\":12345678901234567890123,\"s\":\"<&>\\u2028\"}"}],"structuredContent":{"n":12345678901234567890123,"s":"<&>\u2028"}}`
	if string(got) != want {
		t.Errorf("echo\n got %s\nwant %s", got, want)
	}
}

func TestBigResult(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("big")}, nil)
	const n = 4 << 20
	res := e.call(t, "big", "big", fmt.Sprintf(`{"bytes":%d}`, n))
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 || len(r.Content[0].Text) != n {
		t.Fatalf("big: %v, %d bytes", err, len(res))
	}
	e.call(t, "big", "echo", `{}`)
}

func TestRPCError(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("e")}, nil)
	// A tool the backend does not list is not asked for at all.
	_, err := e.CallTool(context.Background(), "e", "nope", json.RawMessage(`{}`), backends.CallOptions{})
	var nl *backends.NotListedError
	if !errors.As(err, &nl) || nl.Server != "e" || nl.Tool != "nope" {
		t.Errorf("err %#v", err)
	}
	var re *backends.RPCError
	_, err = e.Request(context.Background(), "e", "completion/complete", json.RawMessage(`{}`), backends.CallOptions{})
	if !errors.As(err, &re) || re.Code != -32601 || re.Message != "Method not found" || string(re.Data) != `{"method":"completion/complete"}` || re.Server != "e" {
		t.Errorf("err %#v", err)
	}
}

// A backend that echoes the gateway's numeric ids as strings is answered
// all the same (the handshake and every call would otherwise time out).
func TestStringIDsEchoed(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("s", "-string-ids")}, nil)
	res, err := e.CallTool(context.Background(), "s", "echo", json.RawMessage(`{"n":1}`), backends.CallOptions{})
	if err != nil || !strings.Contains(string(res), `"n":1`) {
		t.Errorf("call: %s %v", res, err)
	}
}

func TestPromptsResourcesRequest(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("pr", "-prompts", "-resources"), srv("plain")}, nil)
	ps := e.Prompts()
	if len(ps) != 1 || ps[0].Name != "greet" || ps[0].Server != "pr" {
		t.Errorf("prompts %+v", ps)
	}
	rs := e.Resources()
	if len(rs) != 2 || rs[0].URI != "test://r1" || rs[0].Template || rs[1].URI != "test://t/{id}" || !rs[1].Template {
		t.Errorf("resources %+v", rs)
	}
	// Declaring names the ready servers that declared a capability, and
	// none for a name it does not know.
	if got := e.Declaring("resources"); !slices.Equal(got, []string{"pr"}) {
		t.Errorf(`Declaring("resources") = %v, want [pr]`, got)
	}
	if got := e.Declaring("resource"); got != nil {
		t.Errorf(`Declaring("resource") = %v, want none`, got)
	}
	res, err := e.Request(context.Background(), "pr", "resources/read", map[string]string{"uri": "test://r1"}, backends.CallOptions{})
	if err != nil || string(res) != `{"contents":[{"uri":"test://r1","text":"r1 body","x-unknown":[1]}]}` {
		t.Errorf("read: %s %v", res, err)
	}
	res, err = e.Request(context.Background(), "pr", "prompts/get", json.RawMessage(`{"name":"greet"}`), backends.CallOptions{})
	if err != nil || !strings.Contains(string(res), "hello") {
		t.Errorf("get: %s %v", res, err)
	}
}

func TestServerToClientRequest(t *testing.T) {
	t.Parallel()
	var gotServer, gotMethod string
	var gotParams json.RawMessage
	e := startAnswering(t, []config.Server{srv("s")}, nil, func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
		gotServer, gotMethod, gotParams = server, method, params
		if method != "sampling/createMessage" {
			return nil, &jsonrpc.Error{Code: -32601, Message: "no"}
		}
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi back"},"model":"m","n":12345678901234567890123}`), nil
	})
	res := e.call(t, "s", "sample", "")
	if gotServer != "s" || gotMethod != "sampling/createMessage" || !strings.Contains(string(gotParams), `"maxTokens":10`) {
		t.Errorf("Hooks.Request got %s %s %s", gotServer, gotMethod, gotParams)
	}
	want := `{"content":[{"type":"text","text":"sampled"}],"structuredContent":{"role":"assistant","content":{"type":"text","text":"hi back"},"model":"m","n":12345678901234567890123}}`
	if string(res) != want {
		t.Errorf("result %s", res)
	}
	caps := string(e.stats(t, "s").Capabilities)
	for _, c := range []string{`"sampling":{}`, `"elicitation":{}`, `"roots":{}`} {
		if !strings.Contains(caps, c) {
			t.Errorf("capabilities %s lack %s", caps, c)
		}
	}
}

func TestServerToClientRequestError(t *testing.T) {
	t.Parallel()
	e := startAnswering(t, []config.Server{srv("s"), srv("none")}, nil, func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
		if server == "none" {
			return nil, errors.New("plain failure")
		}
		return nil, &backends.RPCError{Code: -1, Message: "User rejected sampling request", Data: json.RawMessage(`{"x":1}`)}
	})
	res := e.call(t, "s", "sample", "")
	if !strings.Contains(string(res), `"error":{"code":-1,"message":"User rejected sampling request","data":{"x":1}}`) {
		t.Errorf("result %s", res)
	}
	res = e.call(t, "none", "sample", "")
	if !strings.Contains(string(res), `"code":-32603,"message":"plain failure"`) {
		t.Errorf("result %s", res)
	}
}

func TestNoRequestHook(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("s")}, nil)
	res := e.call(t, "s", "sample", "")
	if !strings.Contains(string(res), `"code":-32601`) {
		t.Errorf("result %s", res)
	}
	// Nothing the gateway relays is declared; MCP Apps, which needs no
	// request of the client, is (client.go).
	if caps := string(e.stats(t, "s").Capabilities); caps != `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}` {
		t.Errorf("capabilities without Hooks.Request: %s", caps)
	}
}

func TestNotificationMessageLogged(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("l")}, nil)
	e.call(t, "l", "log", `{"level":"warning","data":"disk almost full"}`)
	if got := e.log.Find(`level=WARN msg="disk almost full"`, "server=l", "logger=tb"); len(got) != 1 {
		t.Errorf("log %q", got)
	}
}

func TestCloseDuringStartupAndBackoff(t *testing.T) {
	t.Parallel()
	s := srv("r")
	s.Restart = "on-failure"
	e := start(t, []config.Server{s}, nil)
	backends.SetTimings(e.Manager, time.Hour, time.Hour, time.Hour, 200*time.Millisecond)
	e.CallTool(context.Background(), "r", "crash", nil, backends.CallOptions{})
	e.waitState(t, "r", backends.Restarting)
	closeWithin(t, "Close during an hour's backoff", e.Manager)
	if st := e.status(t, "r"); st.State != backends.Stopped {
		t.Errorf("state %s", st.State)
	}

	m := backends.New(backends.Options{Servers: []config.Server{srv("late", "-start-delay", "1h")}})
	backends.SetTimings(m, time.Hour, time.Hour, time.Hour, 200*time.Millisecond)
	m.Start(context.Background())
	testutil.WaitFor(t, testutil.DefaultTimeout, "the child started", func() bool { return m.Status()[0].PID != 0 })
	closeWithin(t, "Close during an hour's startup", m) // stdin closed: the sleeping child only dies by signal
	if st := m.Status()[0]; st.State != backends.Stopped {
		t.Errorf("state %s", st.State)
	}
	m.Wait(context.Background(), 0)
}

func TestManagerWithReaperCloses(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("a")}, func(o *backends.Options) {
		o.Reaper = []string{os.Args[0]}
		// GORACE: a -race binary otherwise sleeps 1 s at exit.
		o.Environ = append(os.Environ(), "BACKENDS_TEST_REAPER=1", "GORACE=atexit_sleep_ms=0")
	})
	e.call(t, "a", "echo", `{}`)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("cc")}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			args := fmt.Sprintf(`{"i":%d}`, i)
			res, err := e.CallTool(context.Background(), "cc", "echo", json.RawMessage(args), backends.CallOptions{})
			if err != nil {
				errs <- err
				return
			}
			if !bytes.HasSuffix(res, []byte(`"structuredContent":`+args+`}`)) {
				errs <- fmt.Errorf("call %d got %s", i, res)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkCallTool(b *testing.B) {
	m := backends.New(backends.Options{Servers: []config.Server{srv("bench")}})
	m.Start(context.Background())
	m.Wait(context.Background(), 0)
	defer m.Close()
	args := json.RawMessage(`{"text":"hello","n":12345678901234567890123}`)
	ctx := context.Background()
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.CallTool(ctx, "bench", "echo", args, backends.CallOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := m.CallTool(ctx, "bench", "echo", args, backends.CallOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkStart measures starting n backends in parallel, for the lead's
// figures (compare n=1 and n=8).
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var servers []config.Server
			for i := range n {
				servers = append(servers, srv(fmt.Sprintf("s%d", i)))
			}
			for b.Loop() {
				m := backends.New(backends.Options{Servers: servers})
				m.Start(context.Background())
				m.Wait(context.Background(), 0)
				if got := len(m.Tools()); got != n*len(baseTools) {
					b.Fatalf("%d tools", got)
				}
				m.Close()
			}
		})
	}
}

// TestApply: a new configuration adds, removes and restarts backends; an
// untouched one keeps its process, and Hooks.Changed names every change.
func TestApply(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{srv("keep"), srv("gone"), srv("change")}, nil)
	keepPID := e.status(t, "keep").PID
	changePID := e.status(t, "change").PID

	ch := e.Apply([]config.Server{srv("keep"), srv("change", "-extra-tools", "1"), srv("new")})
	if !slices.Equal(ch.Added, []string{"new"}) || !slices.Equal(ch.Removed, []string{"gone"}) || !slices.Equal(ch.Restarted, []string{"change"}) {
		t.Errorf("changes %+v", ch)
	}
	for _, name := range []string{"gone", "change", "new"} {
		e.waitChange(t, name)
	}
	e.waitState(t, "new", backends.Ready)
	e.waitState(t, "change", backends.Ready)
	if st := e.status(t, "keep"); st.PID != keepPID || st.State != backends.Ready {
		t.Errorf("keep was disturbed: %+v (pid was %d)", st, keepPID)
	}
	if st := e.status(t, "change"); st.PID == changePID {
		t.Errorf("change was not restarted: %+v", st)
	}
	var names []string
	for _, s := range e.Status() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"keep", "change", "new"}) {
		t.Errorf("servers %v", names)
	}
	e.call(t, "change", "extra_000", `{}`)
	e.call(t, "new", "echo", `{}`)
	if _, err := e.CallTool(context.Background(), "gone", "echo", nil, backends.CallOptions{}); err == nil {
		t.Error("a call to the removed backend succeeded")
	}
	if ch := e.Apply([]config.Server{srv("keep"), srv("change", "-extra-tools", "1"), srv("new")}); !ch.Empty() {
		t.Errorf("the same configuration again changed %+v", ch)
	}
	// The same entries further down the file (an edit above them moved
	// them): nothing restarts.
	moved := []config.Server{srv("keep"), srv("change", "-extra-tools", "1"), srv("new")}
	for i := range moved {
		moved[i].Source = fmt.Sprintf("config.yaml:%d", 20+i)
	}
	if ch := e.Apply(moved); !ch.Empty() {
		t.Errorf("entries that only moved in the file changed %+v", ch)
	}
}

// Calls held back for a batch go to the backend once a pipe's worth is
// held, whether or not the caller flushes: 100 calls of 2 KiB held and
// never flushed are answered all the same, but for those after the last
// 64 KiB.
func TestHeldCallsBounded(t *testing.T) {
	e := start(t, []config.Server{srv("tb")}, nil)
	args := json.RawMessage(`{"text":"` + strings.Repeat("x", 2048) + `"}`)
	var answered atomic.Int32
	for range 100 {
		e.StartToolCall("tb", "echo", args, backends.CallOptions{Batch: true}, func(_ json.RawMessage, err error) {
			if err == nil {
				answered.Add(1)
			}
		})
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the held calls answered", func() bool { return answered.Load() >= 60 })
	e.FlushWrites()
	testutil.WaitFor(t, testutil.DefaultTimeout, "every call answered after the flush", func() bool { return answered.Load() == 100 })
}

// closeWithin closes m, failing if Close waits for what it was meant to cut
// short (an hour); the limit only ends a hang.
func closeWithin(t *testing.T, what string, m *backends.Manager) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Close()
	}()
	select {
	case <-done:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatalf("%s: still waiting after %s", what, testutil.DefaultTimeout)
	}
}

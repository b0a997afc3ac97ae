package backends_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// testbackend is the path of the built testbackend binary.
var testbackend string

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == backends.SandboxArg { // the sandbox tests' helper (Options.Sandbox)
		fmt.Fprintln(os.Stderr, backends.RunSandbox(os.Args[2]))
		os.Exit(126)
	}
	if os.Getenv("BACKENDS_TEST_REAPER") == "1" { // TestManagerWithReaperCloses
		if err := backends.RunReaper(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "reaper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testbackend = testutil.MustBuild("./backends/testbackend", "")
	before := runtime.NumGoroutine()
	code := m.Run()
	// Every Manager was closed, so everything it started must have ended
	// (the fuzzing engine's own goroutines aside).
	if fuzzing := flag.Lookup("test.fuzz"); fuzzing != nil && fuzzing.Value.String() != "" {
		os.Exit(code)
	}
	if code == 0 && !testutil.Poll(time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		fmt.Fprintf(os.Stderr, "goroutines left behind: %d (started with %d)\n", runtime.NumGoroutine(), before)
		buf := make([]byte, 1<<20)
		os.Stderr.Write(buf[:runtime.Stack(buf, true)])
		code = 1
	}
	os.Exit(code)
}

// srv is an enabled testbackend server with restart: never.
func srv(name string, args ...string) config.Server {
	return config.Server{Name: name, Command: testbackend, Args: args, Enabled: true, Prefix: name, Restart: "never"}
}

// env is a test's Manager with its log and its Hooks.Changed calls.
type env struct {
	*backends.Manager
	log     *testutil.LogRecorder
	changed chan string // Hooks.Changed's servers, in order; beyond 100 unread, dropped
}

// waitChange waits for a Hooks.Changed of server, consuming those before it.
func (e *env) waitChange(t *testing.T, server string) {
	t.Helper()
	deadline := time.After(testutil.DefaultTimeout)
	for {
		select {
		case s := <-e.changed:
			if s == server {
				return
			}
		case <-deadline:
			t.Fatalf("no Hooks.Changed(%q)", server)
		}
	}
}

// start starts a Manager over servers (opts may be adjusted by edit), with
// fast supervision timings, waits for it, and closes it at the end of t.
func start(t *testing.T, servers []config.Server, edit func(*backends.Options)) *env {
	t.Helper()
	return startAnswering(t, servers, edit, nil)
}

// startAnswering is start with request as the Manager's Hooks.Request.
func startAnswering(t *testing.T, servers []config.Server, edit func(*backends.Options), request func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error)) *env {
	t.Helper()
	e := &env{log: &testutil.LogRecorder{}, changed: make(chan string, 100)}
	opts := backends.Options{
		Servers:        servers,
		Logger:         e.log.Logger(),
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: 10 * time.Second,
	}
	if edit != nil {
		edit(&opts)
	}
	e.Manager = backends.New(opts)
	e.Manager.SetHooks(backends.Hooks{
		Changed: func(server string) {
			select {
			case e.changed <- server:
			default:
			}
		},
		Request: request,
	})
	backends.SetTimings(e.Manager, 10*time.Millisecond, 40*time.Millisecond, time.Minute, 200*time.Millisecond)
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			for _, r := range e.log.Lines() {
				t.Log(r)
			}
		}
	})
	e.Start(context.Background())
	e.Wait(context.Background(), opts.StartupTimeout)
	return e
}

func (e *env) status(t *testing.T, name string) backends.Status {
	t.Helper()
	for _, s := range e.Status() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %q", name)
	return backends.Status{}
}

// waitState polls until server is in state.
func (e *env) waitState(t *testing.T, name string, want backends.State) backends.Status {
	t.Helper()
	var s backends.Status
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { s = e.status(t, name); return s.State == want }) {
		t.Fatalf("%s: state %s (%s), want %s", name, s.State, s.Error, want)
	}
	return s
}

func (e *env) call(t *testing.T, server, tool, args string) json.RawMessage {
	t.Helper()
	res, err := e.CallTool(context.Background(), server, tool, json.RawMessage(args), backends.CallOptions{})
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", server, tool, err)
	}
	return res
}

// stats is the testbackend's stats structuredContent.
type stats struct {
	Cancelled    []json.RawMessage `json:"cancelled"`
	Reasons      []string          `json:"reasons"`
	Capabilities json.RawMessage   `json:"capabilities"`
	Meta         json.RawMessage   `json:"meta"`
}

func (e *env) stats(t *testing.T, server string) stats {
	t.Helper()
	var r struct {
		SC stats `json:"structuredContent"`
	}
	if err := json.Unmarshal(e.call(t, server, "stats", ""), &r); err != nil {
		t.Fatal(err)
	}
	return r.SC
}

func toolNames(tools []backends.Tool) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Server+"/"+tl.Name)
	}
	return out
}

// waitCancelled polls the backend's stats until it has seen a
// notifications/cancelled.
func (e *env) waitCancelled(t *testing.T, server string) stats {
	t.Helper()
	var st stats
	testutil.Poll(testutil.DefaultTimeout, func() bool { st = e.stats(t, server); return len(st.Cancelled) > 0 })
	return st
}

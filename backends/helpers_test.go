package backends_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// testbackend is the path of the built testbackend binary.
var testbackend string

func TestMain(m *testing.M) {
	switch {
	case os.Getenv("BACKENDS_TEST_REAPER") == "1":
		if err := backends.RunReaper(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "reaper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv("BACKENDS_TEST_GATEWAY") != "":
		testbackend = os.Getenv("BACKENDS_TEST_BACKEND")
		os.Exit(fakeGateway(os.Getenv("BACKENDS_TEST_GATEWAY")))
	}
	dir, err := os.MkdirTemp("", "backends-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testbackend = filepath.Join(dir, "testbackend")
	if runtime.GOOS == "windows" {
		testbackend += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", testbackend, "./testbackend").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build testbackend: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	before := runtime.NumGoroutine()
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 && !goroutinesSettle(before) {
		fmt.Fprintf(os.Stderr, "goroutines left behind: %d (started with %d)\n", runtime.NumGoroutine(), before)
		buf := make([]byte, 1<<20)
		os.Stderr.Write(buf[:runtime.Stack(buf, true)])
		code = 1
	}
	os.Exit(code)
}

// goroutinesSettle waits briefly for the goroutine count to come back to n:
// every Manager was closed, so everything it started must have ended.
func goroutinesSettle(n int) bool {
	for range 100 {
		if runtime.NumGoroutine() <= n {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// fakeGateway is the test binary acting as a gateway that gets SIGKILLed:
// it starts one testbackend (args from the env, space-separated) with the
// reaper, prints "pid N" for it once ready, and waits to be killed.
func fakeGateway(args string) int {
	self, _ := os.Executable()
	m := backends.New(backends.Options{
		Servers: []config.Server{srv("victim", strings.Fields(args)...)},
		Environ: append(os.Environ(), "BACKENDS_TEST_REAPER=1", "BACKENDS_TEST_GATEWAY=", "GORACE=atexit_sleep_ms=0"),
		Reaper:  []string{self},
	})
	m.Start(context.Background())
	m.Wait(context.Background())
	st := m.Status()[0]
	if st.State != backends.Ready {
		fmt.Printf("state %s: %s\n", st.State, st.Error)
		return 1
	}
	fmt.Printf("pid %d\n", st.PID)
	select {}
}

// srv is an enabled testbackend server with restart: never.
func srv(name string, args ...string) config.Server {
	return config.Server{
		Name:    name,
		Command: testbackend,
		Args:    args,
		Enabled: true,
		Prefix:  name,
		Restart: "never",
	}
}

// logRec records log records for assertions.
type logRec struct {
	mu   sync.Mutex
	recs []string // "LEVEL msg key=value ..."
}

func (l *logRec) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRec) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logRec) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRec) WithGroup(string) slog.Handler      { return l }

// find returns the records containing every one of subs.
func (l *logRec) find(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, r := range l.recs {
		for _, s := range subs {
			if !strings.Contains(r, s) {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// changes records OnChange calls.
type changes struct {
	mu    sync.Mutex
	names []string
	ch    chan string
}

func newChanges() *changes { return &changes{ch: make(chan string, 100)} }

func (c *changes) on(server string) {
	c.mu.Lock()
	c.names = append(c.names, server)
	c.mu.Unlock()
	select {
	case c.ch <- server:
	default:
	}
}

// wait waits for an OnChange of server.
func (c *changes) wait(t *testing.T, server string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-c.ch:
			if s == server {
				return
			}
		case <-deadline:
			t.Fatalf("no OnChange(%q)", server)
		}
	}
}

// env is a test's Manager with its log and change records.
type env struct {
	*backends.Manager
	log     *logRec
	changes *changes
}

// start starts a Manager over servers (opts may be adjusted by edit), with
// fast supervision timings, waits for it, and closes it at the end of t.
func start(t *testing.T, servers []config.Server, edit func(*backends.Options)) *env {
	t.Helper()
	e := &env{log: &logRec{}, changes: newChanges()}
	opts := backends.Options{
		Servers:        servers,
		Logger:         slog.New(e.log),
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: 10 * time.Second,
		OnChange:       e.changes.on,
	}
	if edit != nil {
		edit(&opts)
	}
	e.Manager = backends.New(opts)
	backends.SetTimings(e.Manager, 10*time.Millisecond, 40*time.Millisecond, time.Minute, 200*time.Millisecond)
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			e.log.mu.Lock()
			for _, r := range e.log.recs {
				t.Log(r)
			}
			e.log.mu.Unlock()
		}
	})
	e.Start(context.Background())
	e.Wait(context.Background())
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := e.status(t, name)
		if s.State == want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: state %s (%s), want %s", name, s.State, s.Error, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) call(t *testing.T, server, tool, args string) json.RawMessage {
	t.Helper()
	var a json.RawMessage
	if args != "" {
		a = json.RawMessage(args)
	}
	res, err := e.CallTool(context.Background(), server, tool, a, backends.CallOptions{})
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", server, tool, err)
	}
	return res
}

// stats is the testbackend's stats structuredContent.
type stats struct {
	Cancelled    []json.RawMessage `json:"cancelled"`
	Reasons      []string          `json:"reasons"`
	Initialized  bool              `json:"initialized"`
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
	deadline := time.Now().Add(2 * time.Second)
	for {
		st := e.stats(t, server)
		if len(st.Cancelled) > 0 || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

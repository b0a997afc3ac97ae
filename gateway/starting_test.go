package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// While a server starts, a call is decided by what the server lists, not
// by its snapshot: a tool the snapshot shows as harmless that the server
// now marks destructive is put to the user (here refused: the client
// cannot be asked) rather than run once the server is up; and a tool the
// server's filter excludes is not found at once, never waited for and run.
func TestStartingToolDecidedByLiveList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(tools, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := testServer("d", "-tools-file", tools)
	d.InheritEnv, d.Trust = true, "off"
	x := testServer("x")
	x.InheritEnv = true
	x.Tools.Exclude = []string{"stats"}
	servers := []config.Server{d, x}

	// A first run leaves d's snapshot: echo without annotations.
	write(`{}`)
	first := backends.New(backends.Options{Servers: []config.Server{d}, SnapshotDir: dir, DefaultTimeout: 10 * time.Second, StartupTimeout: 10 * time.Second})
	first.Start(context.Background())
	first.Wait(context.Background(), 0)
	if st := first.Status(); st[0].State != backends.Ready {
		t.Fatalf("first run: %+v", st[0])
	}
	first.Close()

	write(`{"tools":{"echo":{"annotations":{"destructiveHint":true}}}}`)
	gate := t.TempDir()
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Gateway.Confirm = "destructive"
	cfg.Servers = servers
	mgr := backends.New(backends.Options{
		Servers:        servers,
		SnapshotDir:    dir,
		Environ:        append(os.Environ(), "TESTBACKEND_PID_DIR="+gate, "TESTBACKEND_START_BARRIER=3"),
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: time.Millisecond, // a call by x's prefix does not wait for it
	})
	gw := New(Options{Config: cfg, Backends: mgr})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { mgr.Close() })
	t.Cleanup(cancel)
	mgr.Start(ctx)
	c := serveRawWith(t, ctx, gw, `{}`) // no elicitation: a destructive call is refused

	echo := c.Request("tools/call", `{"name":"d.echo","arguments":{"ran":true}}`)
	stats := c.Request("tools/call", `{"name":"x.stats","arguments":{}}`)
	if code, msg, _ := c.Await(stats, testutil.DefaultTimeout).Error(t); code != -32602 || msg != "Tool not found: x.stats" {
		t.Errorf("x.stats while x starts: %d %q, want not found", code, msg)
	}
	for _, st := range mgr.Status() {
		if st.State != backends.Starting {
			t.Fatalf("%s is %s before the gate opens", st.Name, st.State)
		}
	}
	if err := os.WriteFile(filepath.Join(gate, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, data := c.Await(echo, testutil.DefaultTimeout).Error(t)
	if code != CodeRefused || data["reason"] != "unconfirmed" {
		t.Errorf("d.echo, destructive by d's live list: %d %v, want refused unconfirmed", code, data)
	}
}

// A server that has just become ready is still shown by its snapshot's
// routes until the gateway's tables catch up (the Changed hook runs on its
// own goroutine, later): a call in that window is decided by the live list
// too, not run by the snapshot's harmless definition because the server is
// ready.
func TestReadyToolDecidedByLiveListBeforeRefresh(t *testing.T) {
	t.Parallel()
	mgr, gw, gate := fromSnapshot(t, `{}`, `{"tools":{"echo":{"annotations":{"destructiveHint":true}}}}`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr.Start(ctx)
	c := serveRawWith(t, ctx, gw, `{}`) // lists d's snapshot; no elicitation

	gate.release(t)
	if err := mgr.AwaitLive(ctx, "d", "echo"); err != nil {
		t.Fatal(err)
	}
	echo := c.Request("tools/call", `{"name":"d.echo","arguments":{"ran":true}}`)
	code, _, data := c.Await(echo, testutil.DefaultTimeout).Error(t)
	if code != CodeRefused || data["reason"] != "unconfirmed" {
		t.Errorf("d.echo, destructive by d's live list, before the tables caught up: %d %v, want refused unconfirmed", code, data)
	}
}

// call_tool_read calls only a tool its live list marks read-only: one its
// snapshot marks so, that the server no longer does, is refused, not run.
func TestCallToolReadDecidedByLiveList(t *testing.T) {
	t.Parallel()
	mgr, gw, gate := fromSnapshot(t, `{"tools":{"echo":{"annotations":{"readOnlyHint":true}}}}`, `{}`, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy"
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr.Start(ctx)
	c := serveRawWith(t, ctx, gw, `{}`)

	read := c.Request("tools/call", `{"name":"gateway.call_tool_read","arguments":{"name":"d.echo","arguments":{"ran":true}}}`)
	gate.release(t)
	code, msg, _ := c.Await(read, testutil.DefaultTimeout).Error(t)
	if code != -32602 || !strings.Contains(msg, "not marked read-only") {
		t.Errorf("call_tool_read of d.echo, not read-only by d's live list: %d %q, want refused as not read-only", code, msg)
	}
}

// A name a snapshot showed for one tool that the live list gives another
// (a+b was alone as d.a_b; the live list has a_b too, which has the name as
// it is) does not run the other tool: the client chose the one it was
// shown, which runs, as it did before the live list was waited for.
func TestStartingCallKeepsTheToolItNamed(t *testing.T) {
	t.Parallel()
	plus := `"a+b":{"result":{"content":[{"type":"text","text":"a+b ran"}]}}`
	mgr, gw, gate := fromSnapshot(t, `{"tools":{`+plus+`}}`,
		`{"tools":{`+plus+`,"a_b":{"result":{"content":[{"type":"text","text":"a_b ran"}]}}}}`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr.Start(ctx)
	c := serveRawWith(t, ctx, gw, `{}`)
	list := c.Await(c.Request("tools/list", `{}`), testutil.DefaultTimeout)
	if !strings.Contains(list.String(), `"name":"d.a_b","description":"a+b`) && !strings.Contains(list.String(), `"d.a_b"`) {
		t.Fatalf("the snapshot does not show a+b as d.a_b: %s", list)
	}

	call := c.Request("tools/call", `{"name":"d.a_b","arguments":{}}`)
	gate.release(t)
	res := c.Await(call, testutil.DefaultTimeout)
	if strings.Contains(res.String(), "a_b ran") {
		t.Fatalf("d.a_b, shown for a+b, ran a_b: %s", res)
	}
	if !strings.Contains(res.String(), "a+b ran") {
		t.Errorf("d.a_b, shown for a+b: %s, want a+b run", res)
	}
}

// A call of a tool the server's filter excludes is not found at once while
// the server starts: it does not wait for the start (the startup timeout)
// to be told so.
func TestExcludedToolNotFoundAtOnce(t *testing.T) {
	t.Parallel()
	x := testServer("x")
	x.InheritEnv = true
	x.Tools.Exclude = []string{"stats"}
	gate := startGate(t.TempDir())
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Servers = []config.Server{x}
	mgr := backends.New(backends.Options{
		Servers:        cfg.Servers,
		Environ:        append(os.Environ(), "TESTBACKEND_PID_DIR="+string(gate), "TESTBACKEND_START_BARRIER=2"),
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: time.Hour, // a call that waits for x waits for the gate
	})
	gw := New(Options{Config: cfg, Backends: mgr})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { mgr.Close() })
	t.Cleanup(cancel)
	t.Cleanup(func() { gate.release(t) })
	mgr.Start(ctx)
	c := serveRawWith(t, ctx, gw, `{}`)

	stats := c.Request("tools/call", `{"name":"x.stats","arguments":{}}`)
	if code, msg, _ := c.Await(stats, testutil.DefaultTimeout).Error(t); code != -32602 || msg != "Tool not found: x.stats" {
		t.Errorf("x.stats while x starts: %d %q, want not found", code, msg)
	}
	if st := mgr.Status(); st[0].State != backends.Starting {
		t.Errorf("x is %s before the gate opens", st[0].State)
	}
}

// startGate holds testbackends (TESTBACKEND_START_BARRIER) until released.
type startGate string

func (g startGate) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(string(g), "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fromSnapshot returns a Manager, not started (closed when the test ends), of one server d (testbackend,
// trust off) whose snapshot lists the tools of tools-file content before,
// and which lists after's once the gate is released; and its Gateway
// (confirm: destructive, no answer tools, config changed by cfg). The
// gateway's tables never follow d by themselves: its Changed hook is held
// until the test ends, so that they change only by what a call does.
func fromSnapshot(t *testing.T, before, after string, cfg func(*config.Config)) (*backends.Manager, *Gateway, startGate) {
	t.Helper()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(tools, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := testServer("d", "-tools-file", tools)
	d.InheritEnv, d.Trust = true, "off"
	servers := []config.Server{d}

	write(before)
	first := backends.New(backends.Options{Servers: servers, SnapshotDir: dir, DefaultTimeout: 10 * time.Second, StartupTimeout: 10 * time.Second})
	first.Start(context.Background())
	first.Wait(context.Background(), 0)
	if st := first.Status(); st[0].State != backends.Ready {
		t.Fatalf("first run: %+v", st[0])
	}
	first.Close()

	write(after)
	gate := t.TempDir()
	c := config.Defaults()
	c.Gateway.AnswerTools = false
	c.Gateway.Confirm = "destructive"
	c.Servers = servers
	if cfg != nil {
		cfg(c)
	}
	mgr := backends.New(backends.Options{
		Servers:        servers,
		SnapshotDir:    dir,
		Environ:        append(os.Environ(), "TESTBACKEND_PID_DIR="+gate, "TESTBACKEND_START_BARRIER=2"),
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: time.Millisecond,
	})
	gw := New(Options{Config: c, Backends: mgr})
	held := make(chan struct{})
	t.Cleanup(func() { mgr.Close() })
	t.Cleanup(func() { close(held) }) // first: Close waits for the hook
	mgr.SetHooks(backends.Hooks{
		Changed: func(server string) {
			<-held
			gw.backendsChanged(server)
		},
		Request:      gw.handleBackendRequest,
		Notification: gw.backendNotification,
	})
	return mgr, gw, startGate(gate)
}

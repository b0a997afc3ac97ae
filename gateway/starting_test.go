package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if err := mgr.AwaitLive(ctx, "d", "echo", nil); err != nil {
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

// A destructive tool called while its server starts, shown then by its
// snapshot as harmless, is put to the user before it runs, on every front
// of the call core (toolcall.go): over stdio a client with elicitation is
// asked (here it declines) and one without is refused, as is lazy mode's
// call_tool, an HTTP POST of 2026-07-28 that declared no elicitation, and
// the REST API, which cannot ask; `mcp-gateway call` (WithConfirmed: the
// user typed it) runs it. None of them runs on the snapshot's word.
func TestStartingDestructiveConfirmedOnEveryFront(t *testing.T) {
	t.Parallel()
	mgr, gw, gate := fromSnapshot(t, `{}`, `{"tools":{"echo":{"annotations":{"destructiveHint":true}}}}`, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy" // call_tool; d's tools stay callable by name
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr.Start(ctx)

	asks := serveRawWith(t, ctx, gw, `{"elicitation":{}}`)
	cannot := serveRawWith(t, ctx, gw, `{}`)
	direct := asks.Request("tools/call", `{"name":"d.echo","arguments":{"ran":true}}`)
	unasked := cannot.Request("tools/call", `{"name":"d.echo","arguments":{"ran":true}}`)
	lazy := cannot.Request("tools/call", `{"name":"gateway.call_tool","arguments":{"name":"d.echo","arguments":{"ran":true}}}`)

	web := gw.NewHTTPFront(HTTPOptions{})
	t.Cleanup(func() { web.Close() })
	mcpSrv := httptest.NewServer(http.HandlerFunc(web.serveMCP))
	t.Cleanup(mcpSrv.Close)
	restSrv := httptest.NewServer(http.HandlerFunc(gw.serveCall))
	t.Cleanup(restSrv.Close)
	post := func(url, body string, hdr map[string]string) <-chan string {
		out := make(chan string, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- err.Error()
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			out <- strconv.Itoa(resp.StatusCode) + " " + string(raw)
		}()
		return out
	}
	perRequest := post(mcpSrv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d.echo","arguments":{"ran":true},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c26","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "d.echo"})
	rest := post(restSrv.URL, `{"name":"d.echo","arguments":{"ran":true}}`, nil)
	type outcome struct {
		raw json.RawMessage
		e   *jsonrpc.Error
	}
	typed := make(chan outcome, 1)
	go func() {
		raw, e := gw.Call(WithConfirmed(ctx), "d.echo", json.RawMessage(`{"ran":true}`))
		typed <- outcome{raw, e}
	}()
	for _, st := range mgr.Status() {
		if st.State != backends.Starting {
			t.Fatalf("%s is %s before the gate opens", st.Name, st.State)
		}
	}
	gate.release(t)

	for name, id := range map[string]string{"stdio without elicitation": unasked, "lazy call_tool": lazy} {
		if code, _, data := cannot.Await(id, testutil.DefaultTimeout).Error(t); code != CodeRefused || data["reason"] != "unconfirmed" {
			t.Errorf("%s: %d %v, want refused unconfirmed", name, code, data)
		}
	}
	if got := <-perRequest; !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"reason":"unconfirmed"`) {
		t.Errorf("HTTP, 2026-07-28 without elicitation: %s, want refused unconfirmed", got)
	}
	if got := <-rest; !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "CALL_REFUSED") {
		t.Errorf("REST: %s, want 403 CALL_REFUSED", got)
	}
	if o := <-typed; o.e != nil || !strings.Contains(string(o.raw), `\"ran\":true`) {
		t.Errorf("mcp-gateway call: %s %v, want d.echo run", o.raw, o.e)
	}

	// The client that can be asked is asked, once d's live list is
	// known, and its call waits for the answer.
	testutil.WaitFor(t, testutil.DefaultTimeout, "d.echo's question, or its answer", func() bool {
		return len(asks.Since(0, "elicitation/create")) > 0 || asks.Answered(direct)
	})
	if asks.Answered(direct) {
		t.Fatalf("stdio: d.echo answered without the user being asked: %s", asks.Await(direct, testutil.DefaultTimeout))
	}
	ask := asks.Since(0, "elicitation/create")[0]
	if msg := string(ask.Member("params")); !strings.Contains(msg, "d.echo") || !strings.Contains(msg, "destructive") {
		t.Errorf("the question: %s", msg)
	}
	asks.Send(`{"jsonrpc":"2.0","id":` + ask.ID() + `,"result":{"action":"decline"}}`)
	if code, _, data := asks.Await(direct, testutil.DefaultTimeout).Error(t); code != CodeRefused || data["reason"] != "declined" {
		t.Errorf("stdio, declined: %d %v, want refused declined", code, data)
	}
}

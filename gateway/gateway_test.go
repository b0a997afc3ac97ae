package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// testbackendBin is backends/testbackend, built once by TestMain.
var testbackendBin string

func TestMain(m *testing.M) {
	testbackendBin = testutil.MustBuild("./backends/testbackend", "")
	os.Exit(m.Run())
}

// harness is a Gateway with real testbackend children and a go-sdk client
// connected to it in memory.
type harness struct {
	session     *mcp.ClientSession
	listChanged atomic.Int32
}

// newGateway returns a Gateway over real testbackend children (no answer
// tools), started, and a context that ends when the test does; the backends
// are stopped after the test's own cleanups.
func newGateway(t testing.TB, mutate func(*config.Config), servers ...config.Server) (*Gateway, context.Context) {
	t.Helper()
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Servers = servers
	if mutate != nil {
		mutate(cfg)
	}
	mgr := backends.New(backends.Options{
		Servers:        servers,
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: 10 * time.Second,
	})
	gw := New(Options{Config: cfg, Backends: mgr})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { mgr.Close() }) // runs last
	t.Cleanup(cancel)
	mgr.Start(ctx)
	return gw, ctx
}

func newHarness(t *testing.T, clientName string, servers ...config.Server) *harness {
	t.Helper()
	gw, ctx := newGateway(t, nil, servers...)
	return connectHarness(t, gw, ctx, clientName)
}

// connectHarness connects a go-sdk client named clientName to gw.
func connectHarness(t *testing.T, gw *Gateway, ctx context.Context, clientName string) *harness {
	t.Helper()
	h := &harness{}
	ct, st := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- gw.Serve(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { h.listChanged.Add(1) },
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	h.session = cs
	t.Cleanup(func() {
		cs.Close()
		<-served
	})
	return h
}

func testServer(name string, args ...string) config.Server {
	return config.Server{Name: name, Prefix: name, Command: testbackendBin, Args: args, Enabled: true, Restart: "never"}
}

func (h *harness) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := h.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (h *harness) call(name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return h.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// rpcCode returns the JSON-RPC error a client call failed with.
func rpcCode(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return we
}

// The client hears list_changed only for a list it has seen that changed
// since: not for the tables being built as backends start, and not for its
// own first list.
func TestListChangedOnlyWhenStale(t *testing.T) {
	h := newHarness(t, "test-client", testServer("tb", "-list-changed-on-init"))
	names := h.toolNames(t)
	if !slices.Contains(names, "tb.echo") {
		t.Fatalf("tools = %v, want tb.echo", names)
	}
	time.Sleep(300 * time.Millisecond) // any notification of the first build would be out by now
	if n := h.listChanged.Load(); n != 0 {
		t.Fatalf("%d list_changed notifications before any change the client had not seen", n)
	}
	if _, err := h.call("tb.change", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "list_changed after tb.change", func() bool { return h.listChanged.Load() > 0 })
	if names := h.toolNames(t); !slices.ContainsFunc(names, func(n string) bool { return len(n) > 9 && n[:9] == "tb.added_" }) {
		t.Errorf("tools after change = %v, want a tb.added_N", names)
	}
}

// Strict clients get names without dots.
func TestStrictNamesForClaude(t *testing.T) {
	h := newHarness(t, "claude-code", testServer("tb"))
	names := h.toolNames(t)
	if !slices.Contains(names, "tb__echo") || slices.Contains(names, "tb.echo") {
		t.Fatalf("tools for claude-code = %v, want tb__echo", names)
	}
	res, err := h.call("tb__echo", map[string]any{"x": 1})
	if err != nil || res.IsError {
		t.Fatalf("call tb__echo: %v %+v", err, res)
	}
}

// Calling a tool of a backend that crashed or never started tells the
// client why, instead of "Tool not found".
func TestOrphanCallsReportTheBackend(t *testing.T) {
	h := newHarness(t, "test-client", testServer("tb"), testServer("dead", "-fail-start", "4"))
	h.toolNames(t)

	_, err := h.call("dead.anything", map[string]any{})
	if e := rpcCode(t, err); e.Code != codeServerError || e.Message != "MCP server 'dead' is not running" {
		t.Errorf("call to a failed backend: %d %q, want -32000 not running", e.Code, e.Message)
	}
	_, err = h.call("tb.crash", map[string]any{})
	if e := rpcCode(t, err); e.Code != codeServerError || e.Message != "MCP server 'tb' crashed: exit status 3" {
		t.Errorf("crash mid-call: %d %q", e.Code, e.Message)
	}
	// tb's tools left the list, but a client with a cached list still
	// learns why its call fails.
	testutil.WaitFor(t, 10*time.Second, "tb's tools to leave the list", func() bool { return !slices.Contains(h.toolNames(t), "tb.echo") })
	_, err = h.call("tb.echo", map[string]any{})
	e := rpcCode(t, err)
	var data struct {
		Server, State string
		StderrTail    []string `json:"stderr_tail"`
	}
	json.Unmarshal(e.Data, &data)
	if e.Code != codeServerError || data.Server != "tb" || data.State != "crashed" || len(data.StderrTail) == 0 {
		t.Errorf("call after crash: %d %q %s, want -32000 from tb, crashed, with stderr", e.Code, e.Message, e.Data)
	}
	_, err = h.call("nosuch.tool", map[string]any{})
	if e := rpcCode(t, err); e.Code != jsonrpc.CodeInvalidParams || e.Message != "Tool not found: nosuch.tool" {
		t.Errorf("unknown tool: %d %q", e.Code, e.Message)
	}
}

// Prompts are named like tools; resources and templates keep their URIs and
// are read from the backend that listed them.
func TestPromptsAndResourcesForwarded(t *testing.T) {
	h := newHarness(t, "test-client", testServer("a", "-prompts", "-resources"), testServer("b", "-prompts"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	prompts, err := h.session.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a.greet", "b.greet"}) {
		t.Fatalf("prompts = %v, want a.greet and b.greet", names)
	}
	got, err := h.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "b.greet", Arguments: map[string]string{"who": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "hello" {
		t.Errorf("prompts/get = %+v", got)
	}

	res, err := h.session.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "test://r1" {
		t.Fatalf("resources = %+v, %v", res, err)
	}
	tmpl, err := h.session.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "test://t/{id}" {
		t.Fatalf("templates = %+v, %v", tmpl, err)
	}
	for _, uri := range []string{"test://r1", "test://t/42"} {
		read, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "r1 body" {
			t.Errorf("resources/read %s = %+v, %v", uri, read, err)
		}
	}
	// A URI nothing lists is asked of the backends that declare resources
	// (docs/transparency.md); the testbackend reads any URI.
	if read, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://unlisted"}); err != nil || len(read.Contents) != 1 {
		t.Errorf("reading an unlisted URI = %+v, %v", read, err)
	}
}

// rawClient speaks line-delimited JSON to Gateway.ServeStdio over pipes.
type rawClient struct {
	*testutil.Client
	in *io.PipeWriter
}

func newRawClient(t *testing.T, mutate func(*config.Config), servers ...config.Server) *rawClient {
	t.Helper()
	gw, ctx := newGateway(t, mutate, servers...)
	return serveRaw(t, ctx, gw)
}

// serveRaw serves gw over pipes until the test ends, initializes as a
// client and lists the tools.
func serveRaw(t *testing.T, ctx context.Context, gw *Gateway) *rawClient {
	t.Helper()
	return serveRawWith(t, ctx, gw, `{}`)
}

// serveRawWith is serveRaw for a client that declares caps.
func serveRawWith(t *testing.T, ctx context.Context, gw *Gateway, caps string) *rawClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		gw.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-served
	})
	c := &rawClient{Client: testutil.NewClient(t, inW, outR, testutil.ClientOptions{}), in: inW}
	c.Send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"1"}}}`)
	c.Next()
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.Send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	c.Next()
	return c
}

// A request id already in flight is rejected, whichever path serves the
// first call; the first call still gets its one answer.
func TestDuplicateRequestID(t *testing.T) {
	c := newRawClient(t, nil, testServer("tb"))
	c.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tb.slow","arguments":{"ms":300}}}`)
	c.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tb.echo","arguments":{}}}`)
	first, second := c.Next(), c.Next()
	if first.ID() != "3" || !bytes.Contains(first.Member("error"), []byte(`-32600`)) {
		t.Errorf("first reply = %s, want -32600 for the duplicate", first)
	}
	if second.ID() != "3" || !bytes.Contains(second.Member("result"), []byte("slept")) {
		t.Errorf("second reply = %s, want tb.slow's result", second)
	}
	// The id is free again once answered.
	c.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tb.echo","arguments":{"a":1}}}`)
	if again := c.Next(); again.Member("result") == nil {
		t.Errorf("reusing a finished id: %s", again)
	}
}

// A progress token too large for a float64 comes back digit for digit.
func TestProgressTokenExact(t *testing.T) {
	c := newRawClient(t, nil, testServer("tb"))
	c.Send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":2,"ms":1},"_meta":{"progressToken":12345678901234567890}}}`)
	var progress int
	for {
		m := c.Next()
		if m.Method() == "notifications/progress" {
			if !bytes.Contains(m.Member("params"), []byte(`"progressToken":12345678901234567890`)) {
				t.Errorf("progress params = %s", m.Member("params"))
			}
			progress++
			continue
		}
		if m.ID() != "5" || m.Member("result") == nil {
			t.Fatalf("reply = %s", m)
		}
		break
	}
	if progress != 2 {
		t.Errorf("%d progress notifications before the result, want 2", progress)
	}
}

// When the backend that serves a resource goes down, the next one that
// lists it serves it.
func TestResourceOwnerFailover(t *testing.T) {
	h := newHarness(t, "test-client", testServer("a", "-resources"), testServer("b", "-resources"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.session.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.call("a.crash", map[string]any{}); err == nil {
		t.Fatal("a.crash succeeded")
	}
	testutil.WaitFor(t, 10*time.Second, "b to serve test://r1", func() bool {
		read, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r1"})
		return err == nil && len(read.Contents) == 1
	})
}

// Lazy mode's call_tool forwards like a direct call: a down backend's tool
// reports the backend, not "Tool not found".
func TestLazyCallToolOrphan(t *testing.T) {
	cfg := func(c *config.Config) { c.Gateway.ToolsMode = "lazy" }
	c := newRawClient(t, cfg, testServer("tb"), testServer("dead", "-fail-start", "4"))
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gateway.call_tool","arguments":{"name":"dead.x","arguments":{}}}}`)
	if m := c.Next(); !bytes.Contains(m.Member("error"), []byte(`"MCP server 'dead' is not running"`)) {
		t.Errorf("call_tool to a failed backend = %s", m)
	}
	c.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gateway.call_tool","arguments":{"name":"tb.echo","arguments":{"k":12345678901234567890}}}}`)
	if m := c.Next(); !bytes.Contains(m.Member("result"), []byte(`12345678901234567890`)) {
		t.Errorf("call_tool tb.echo = %s", m)
	}
}

// A client that writes its calls and closes stdin still gets the answers.
func TestEndOfInputWaitsForCallsInFlight(t *testing.T) {
	c := newRawClient(t, nil, testServer("tb"))
	c.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tb.slow","arguments":{"ms":300}}}`)
	c.in.Close()
	if m := c.Next(); m.ID() != "7" || !bytes.Contains(m.Member("result"), []byte("slept")) {
		t.Errorf("reply after end of input = %s, want tb.slow's result", m)
	}
}

// Sessions share one tool table per naming mode, built again only when a
// backend's tools change: a sessionless HTTP request is a session, and would
// otherwise rewrite every tool's definition (BenchmarkHTTPStatelessToolsCall).
func TestToolTableShared(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("tb"))
	gw.opts.Backends.Wait(ctx, 0)
	same := func(a, b map[string]toolRoute) bool {
		return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
	}
	plain := gw.toolRoutes(gw.namer(false)).routes
	first := gw.toolRoutes(gw.namer(false)).findIndex(gw.instructions)
	if again := gw.toolRoutes(gw.namer(false)); !same(plain, again.routes) || again.findIndex(gw.instructions) != first {
		t.Error("a second session built the table or its find_tools index again")
	}
	if strict := gw.toolRoutes(gw.namer(true)).routes; same(plain, strict) || strict["tb__echo"].own != "echo" {
		t.Error("the strict naming mode shares the plain table")
	}
	if _, err := gw.opts.Backends.CallTool(ctx, "tb", "change", nil, backends.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "a new table after tb.change", func() bool {
		now := gw.toolRoutes(gw.namer(false))
		return !same(plain, now.routes) && len(now.order) == len(plain)+1
	})
	// The new table's index analyses only the tool that is new: the
	// others' analysis is the first index's, which holds the first
	// table's definitions (the new table's are new copies).
	table := gw.toolRoutes(gw.namer(false))
	next := table.findIndex(gw.instructions)
	reused := 0
	for name := range table.routes {
		a, inNext := next.Def(name)
		b, inFirst := first.Def(name)
		if inNext && inFirst && unsafe.SliceData(a) == unsafe.SliceData(b) {
			reused++
		}
	}
	if n, before := next.Count("", nil), first.Count("", nil); n != before+1 || reused != before {
		t.Errorf("new index: %d tools, %d of the %d before reused", n, reused, before)
	}
}

// A session keeps no copy of the tools: they are in the table every
// session shares, and a session's own memory holds only the tools of
// backends that went down (to tell a caller why their call fails). With
// 50,000 tools a copy per session was most of a session's memory (24 MB).
func TestSessionHoldsNoCopyOfTheTools(t *testing.T) {
	g, ctx := newGateway(t, nil, testServer("tb", "-extra-tools", "500"), config.Server{Name: "own", Prefix: "", Command: testbackendBin, Enabled: true, Restart: "never"})
	g.opts.Backends.Wait(ctx, 0)
	f := g.newFront(frontOptions{})
	defer g.dropFront(f)
	f.rebuild(ctx, always)
	tools, known := len(f.tables().tools), len(f.tables().known)
	if tools < 500 || known != 0 {
		t.Fatalf("%d tools in the tables, %d kept by the session, want none kept while every backend is up", tools, known)
	}
	// own's tools carry no prefix: once own is down, only the session
	// still knows that "echo" was its.
	if _, err := g.opts.Backends.CallTool(ctx, "own", "crash", nil, backends.CallOptions{}); err == nil {
		t.Fatal("crash did not crash")
	}
	testutil.WaitFor(t, 10*time.Second, "own to be down", func() bool { return g.notReady()["own"] })
	f.rebuild(ctx, always)
	if r, ok := f.orphan("echo"); !ok || r.server != "own" {
		t.Errorf("orphan(echo) = %+v, %v: want own's", r, ok)
	}
	known = len(f.tables().known)
	if known == 0 || known > 20 {
		t.Errorf("the session keeps %d tools after own went down, want own's only", known)
	}
}

// TestNewWithoutBackends: a Gateway built without a Manager (no servers)
// gets an empty one, so that nothing on the request path asks whether
// there are backends.
func TestNewWithoutBackends(t *testing.T) {
	g := New(Options{})
	if g.opts.Backends == nil {
		t.Fatal("Options.Backends is nil after New; want an empty Manager")
	}
	if st := g.opts.Backends.Status(); len(st) != 0 {
		t.Fatalf("the empty Manager has servers: %v", st)
	}
}

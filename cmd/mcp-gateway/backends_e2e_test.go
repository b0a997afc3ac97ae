package main

// End-to-end tests of the backends behind the real binary (docs/design.md): the
// scriptable testbackend (backends/testbackend) is configured as one or more
// servers, and the gateway is driven over stdio, with raw JSON lines (to see
// exact bytes, ids and notifications) or with the go-sdk client (sampling,
// list_changed). Process-tree tests (kill -9, shutdown) and the tools, call
// and status sub-commands are here too.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// beReadTimeout bounds every wait for a reply: generous, for a loaded
// machine running everything under -race.
const beReadTimeout = 30 * time.Second

// beServer is one servers: entry. Configs are written as JSON (valid YAML).
type beServer struct {
	Name      string            `json:"name"`
	Command   string            `json:"command"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	TimeoutMS int               `json:"timeout_ms,omitempty"`
	Restart   string            `json:"restart,omitempty"`
	Tools     *beFilter         `json:"tools,omitempty"`
	Inherit   bool              `json:"inherit_env,omitempty"`
}

type beFilter struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// tb is a testbackend server entry.
func tb(name string, args ...string) beServer {
	return beServer{Name: name, Command: backendBin, Args: args}
}

// beConfig writes a config with these servers and no answer tools.
func beConfig(t *testing.T, servers ...beServer) string {
	t.Helper()
	cfg := map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "answer_tools": false},
		"servers": servers,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, string(b))
}

// rawSession is a line-mode client of the gateway binary that has
// completed the handshake: responses are matched by id, notifications kept.
type rawSession struct {
	t *testing.T
	p *proc
}

// startRaw starts the gateway on cfg and initializes as clientName.
func startRaw(t *testing.T, cfg, clientName string, env ...string) *rawSession {
	t.Helper()
	p := startGateway(t, baseEnv(t, env...), "--stdio", "--config", cfg)
	return initRaw(t, p, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":`+strconv.Quote(clientName)+`,"version":"1"}}`)
}

// initRaw completes the handshake with these initialize params.
func initRaw(t *testing.T, p *proc, params string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, p: p}
	if init := s.call("initialize", params); init.Map()["result"] == nil {
		t.Fatalf("initialize: %s", init)
	}
	s.write(initializedMsg)
	return s
}

func (s *rawSession) write(line string) {
	s.t.Helper()
	s.p.Send(line)
}

// request sends a request and returns its id.
func (s *rawSession) request(method, params string) string {
	s.t.Helper()
	return s.p.Request(method, params)
}

// await waits for the response to id.
func (s *rawSession) await(id string, d time.Duration) testutil.Msg {
	s.t.Helper()
	return s.p.AwaitWithin(id, d)
}

func (s *rawSession) call(method, params string) testutil.Msg {
	s.t.Helper()
	return s.p.Call(method, params)
}

func (s *rawSession) callTool(name, args string) testutil.Msg {
	s.t.Helper()
	return s.call("tools/call", `{"name":`+strconv.Quote(name)+`,"arguments":`+args+`}`)
}

// toolsList returns the names of tools/list.
func (s *rawSession) toolsList() []string {
	s.t.Helper()
	return toolNames(s.t, s.call("tools/list", `{}`).Map())
}

// structured returns a successful tools/call result's structuredContent.
func (s *rawSession) structured(name, args string) map[string]any {
	s.t.Helper()
	r := s.callTool(name, args)
	res := r.Result(s.t)
	if res["isError"] == true {
		s.t.Fatalf("%s: isError result %s", name, r)
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		s.t.Fatalf("%s: no structuredContent in %s", name, r)
	}
	return sc
}

// noteMark is a position in the notification log.
func (s *rawSession) noteMark() int { return s.p.Mark() }

// notesSince returns the notifications with this method received after mark.
func (s *rawSession) notesSince(mark int, method string) []testutil.Msg {
	return s.p.Since(mark, method)
}

// waitNote waits until a notification with this method arrives after mark.
func (s *rawSession) waitNote(mark int, method string, d time.Duration) testutil.Msg {
	s.t.Helper()
	return s.p.WaitNoteWithin(mark, method, d)
}

func wantTools(t *testing.T, names []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("tools/list lacks %s: %v", w, names)
		}
	}
}

func wantNoTools(t *testing.T, names []string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if slices.Contains(names, w) {
			t.Errorf("tools/list has %s: %v", w, names)
		}
	}
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// tbTools are testbackend's own tools.
var tbTools = []string{"echo", "crash", "hang", "slow", "progress", "big", "odd", "change", "sample", "log", "stats", "deaf"}

func prefixed(prefix, sep string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + sep + n
	}
	return out
}

// TestBackendToolsListFiltersAndFailures: one gateway with a plain backend,
// a filtered one, a slow starter, a chatty one (banners on stdout) and one
// that fails at start. tools/list waits for the slow one; the failing one
// costs nothing but its own tools, and calling it explains why.
func TestBackendToolsListFiltersAndFailures(t *testing.T) {
	t.Parallel()
	flt := tb("flt")
	flt.Tools = &beFilter{Include: []string{"e*", "s*"}, Exclude: []string{"slow"}}
	broken := tb("broken", "-fail-start", "7")
	broken.Restart = "never" // on-failure would retry it (TestFailedStartRetried)
	cfg := beConfig(t,
		tb("tb"),
		flt,
		tb("late", "-start-delay", "1500ms"),
		tb("chatty", "-banner", "3", "-chatty-stdout", "-stderr-lines", "2"),
		broken,
	)
	s := startRaw(t, cfg, "e2e")
	names := s.toolsList()

	wantTools(t, names, prefixed("tb", ".", tbTools...)...)
	wantTools(t, names, "flt.echo", "flt.sample", "flt.stats")
	wantNoTools(t, names, "flt.slow", "flt.crash", "flt.hang", "flt.odd")
	if got := withPrefix(names, "flt."); len(got) != 3 {
		t.Errorf("flt tools = %v, want echo, sample, stats", got)
	}
	wantTools(t, names, "late.echo", "chatty.echo")
	if got := withPrefix(names, "broken."); len(got) != 0 {
		t.Errorf("tools of a backend that failed to start: %v", got)
	}

	// The slow starter and the chatty one work.
	if sc := s.structured("late.echo", `{"who":"late"}`); sc["who"] != "late" {
		t.Errorf("late.echo = %v", sc)
	}
	for i := range 3 {
		if sc := s.structured("chatty.echo", fmt.Sprintf(`{"i":%d}`, i)); fmt.Sprint(sc["i"]) != strconv.Itoa(i) {
			t.Errorf("chatty.echo = %v", sc)
		}
	}

	// The failed backend: its tools are not listed, but a call to one of
	// its names gets -32000 with the state, reason and stderr tail.
	code, msg, data := s.callTool("broken.echo", `{}`).Error(t)
	wantNotRunning(t, code, msg, data, "broken", "failed", "exit status 7", "failing at start with 7")
	// A filtered-out tool is not callable.
	if code, msg, _ := s.callTool("flt.slow", `{"ms":1}`).Error(t); code != -32602 || msg != "Tool not found: flt.slow" {
		t.Errorf("flt.slow: %d %q", code, msg)
	}
	// The others still work after all that.
	if sc := s.structured("tb.echo", `{"ok":true}`); sc["ok"] != true {
		t.Errorf("tb.echo = %v", sc)
	}
	if !strings.Contains(s.p.stderr.String(), "broken") {
		t.Errorf("the failure of broken is not logged:\n%s", s.p.stderr)
	}
}

// wantNotRunning checks a -32000 error of docs/errors.md.
func wantNotRunning(t *testing.T, code int, msg string, data map[string]any, server, state, reason, tailLine string) {
	t.Helper()
	if code != -32000 {
		t.Errorf("code = %d, want -32000 (%s)", code, msg)
	}
	want := "MCP server '" + server + "' is not running"
	if state == "crashed" {
		want = "MCP server '" + server + "' crashed: " + reason
	}
	if msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	if data["server"] != server {
		t.Errorf("data.server = %v, want %s", data["server"], server)
	}
	if state != "" && data["state"] != state {
		t.Errorf("data.state = %v, want %s", data["state"], state)
	}
	if r, _ := data["reason"].(string); !strings.Contains(r, reason) {
		t.Errorf("data.reason = %q, want it to contain %q", r, reason)
	}
	tail, ok := data["stderr_tail"].([]any)
	if !ok {
		t.Errorf("data.stderr_tail = %#v, want an array", data["stderr_tail"])
	} else if tailLine != "" && !slices.ContainsFunc(tail, func(l any) bool { return strings.Contains(fmt.Sprint(l), tailLine) }) {
		t.Errorf("data.stderr_tail = %v, want a line with %q", tail, tailLine)
	}
}

// A client that needs strict names (Claude Code) gets tb__echo, never a dot.
func TestBackendStrictNamesForClaudeCode(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "claude-code")
	names := s.toolsList()
	wantTools(t, names, prefixed("tb", "__", tbTools...)...)
	for _, n := range names {
		if strings.Contains(n, ".") {
			t.Errorf("strict client got %q", n)
		}
	}
	if sc := s.structured("tb__echo", `{"a":1}`); fmt.Sprint(sc["a"]) != "1" {
		t.Errorf("tb__echo = %v", sc)
	}
}

// A crash in the middle of a call fails the calls in flight at once with
// the exit status and stderr tail; the tools leave the list (list_changed);
// the child is reaped (no zombie); restart: on-failure brings them back
// (list_changed again); restart: never leaves the server crashed.
func TestBackendCrashAndRestart(t *testing.T) {
	t.Parallel()
	crashme := tb("tb", "-name", "crashme")
	crashme.Restart = "on-failure"
	never := tb("never", "-name", "neverrestart")
	never.Restart = "never"
	s := startRaw(t, beConfig(t, crashme, never, tb("other")), "e2e")
	wantTools(t, s.toolsList(), "tb.echo", "never.echo", "other.echo")
	childGone := childGoneCheck(t, s.p.cmd.Process.Pid, "crashme")

	mark := s.noteMark()
	slowID := s.request("tools/call", `{"name":"tb.progress","arguments":{"steps":600,"ms":100},"_meta":{"progressToken":"p"}}`)
	s.waitNote(mark, "notifications/progress", beReadTimeout) // the long call is at the backend
	start := time.Now()
	crashID := s.request("tools/call", `{"name":"tb.crash","arguments":{}}`)
	for _, id := range []string{slowID, crashID} {
		r := s.await(id, beReadTimeout)
		code, msg, data := r.Error(t)
		wantNotRunning(t, code, msg, data, "tb", "crashed", "exit status 3", "crashing now")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("in-flight calls failed %s after the crash, want at once", d)
	}
	s.waitNote(mark, "notifications/tools/list_changed", beReadTimeout)
	listed := s.noteMark()
	names := s.toolsList()
	// The restart (after 1 s) may already have brought them back on a very
	// slow machine; only then is the list allowed to show them.
	restartedEarly := len(withPrefix(names, "tb.")) != 0
	if restartedEarly && !strings.Contains(s.p.stderr.String(), "restarting backend") {
		t.Errorf("tools of the crashed backend still listed: %v", names)
	}
	wantTools(t, names, "other.echo")
	if sc := s.structured("other.echo", `{"still":"here"}`); sc["still"] != "here" {
		t.Errorf("other.echo = %v", sc)
	}
	// The crashed child was reaped by the gateway: not even a zombie.
	if childGone != nil {
		testutil.WaitFor(t, 10*time.Second, "crashed child reaped", childGone)
	}

	// restart: on-failure (after ~1 s): list_changed, and the tools are back.
	deadline := time.Now().Add(beReadTimeout)
	for !restartedEarly {
		s.waitNote(listed, "notifications/tools/list_changed", time.Until(deadline))
		listed = s.noteMark()
		if slices.Contains(s.toolsList(), "tb.echo") {
			break
		}
	}
	if sc := s.structured("tb.echo", `{"again":true}`); sc["again"] != true {
		t.Errorf("tb.echo after restart = %v", sc)
	}

	// restart: never: crashed it stays, and says so.
	code, msg, data := s.callTool("never.crash", `{"code":5}`).Error(t)
	wantNotRunning(t, code, msg, data, "never", "crashed", "exit status 5", "crashing now")
	time.Sleep(200 * time.Millisecond)
	code, msg, data = s.callTool("never.echo", `{}`).Error(t)
	wantNotRunning(t, code, msg, data, "never", "crashed", "exit status 5", "crashing now")
	wantNoTools(t, s.toolsList(), "never.echo")
}

// A hung tool times out at the deadline with -32001 and the data of docs/errors.md;
// the backend is told (notifications/cancelled), kept, and works next.
// timeout_ms of the server and DEFAULT_TIMEOUT both apply.
func TestBackendTimeout(t *testing.T) {
	t.Parallel()
	own := tb("tb")
	own.TimeoutMS = 1200
	s := startRaw(t, beConfig(t, own, tb("dflt")), "e2e", "DEFAULT_TIMEOUT=900ms")
	s.toolsList()

	start := time.Now()
	hangID := s.request("tools/call", `{"name":"tb.hang","arguments":{}}`)
	dfltID := s.request("tools/call", `{"name":"dflt.hang","arguments":{}}`)
	cases := []struct {
		id, server, tool, msg string
		ms                    int
	}{
		{hangID, "tb", "tb.hang", "Tool 'tb.hang' timed out after 1.2s", 1200},
		{dfltID, "dflt", "dflt.hang", "Tool 'dflt.hang' timed out after 900ms", 900},
	}
	for _, c := range cases {
		r := s.await(c.id, beReadTimeout)
		elapsed := time.Since(start)
		code, msg, data := r.Error(t)
		if code != -32001 || msg != c.msg {
			t.Errorf("%s: %d %q, want -32001 %q", c.tool, code, msg, c.msg)
		}
		wantData := map[string]any{"server": c.server, "tool": c.tool, "timeout_ms": json.Number(strconv.Itoa(c.ms)), "reason": "timeout"}
		for k, v := range wantData {
			if data[k] != v {
				t.Errorf("%s: data.%s = %v, want %v (data %v)", c.tool, k, data[k], v, data)
			}
		}
		// At the deadline, not later (loose upper bound for a loaded machine).
		if c.tool == "tb.hang" && (elapsed < 1100*time.Millisecond || elapsed > 1200*time.Millisecond+4*time.Second) {
			t.Errorf("%s timed out after %s, want ~1.2s", c.tool, elapsed)
		}
	}
	// The backend got notifications/cancelled and still works.
	testutil.WaitFor(t, 10*time.Second, "the backend recorded the cancellation", func() bool {
		return len(cancelled(s.structured("tb.stats", `{}`))) == 1
	})
	if sc := s.structured("tb.echo", `{"after":"timeout"}`); sc["after"] != "timeout" {
		t.Errorf("tb.echo after a timeout = %v", sc)
	}
	if got := cancelled(s.structured("dflt.stats", `{}`)); len(got) != 1 {
		t.Errorf("dflt cancelled = %v", got)
	}
}

// Results pass through byte for byte: the raw bytes of the result member are
// testbackend's — 19+ digit integers, 1E+400, 2.50, \u escapes, <&>, an
// unknown content type, _meta, and isError:true (a result, not an error) —
// except for insignificant whitespace between tokens, which go-sdk's
// encoder drops (a message on the wire is one line anyway).
func TestBackendOddResultsByteIdentical(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	r := s.callTool("tb.odd", `{}`)
	if got, want := r.Member("result"), compactJSON(t, tbOdd); string(got) != want {
		t.Errorf("tb.odd result\n got %s\nwant %s", got, want)
	}
	r = s.callTool("tb.odd", `{"isError":true}`)
	if r.Map()["error"] != nil {
		t.Errorf("isError:true became an error: %s", r)
	}
	if got := r.Member("result"); string(got) != tbOddError {
		t.Errorf("tb.odd isError result\n got %s\nwant %s", got, tbOddError)
	}
	// Arguments go out as received; structuredContent comes back intact.
	r = s.callTool("tb.echo", `{"n":12345678901234567890123,"f":1.50,"s":"<&>"}`)
	var res struct {
		SC json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Member("result"), &res); err != nil {
		t.Fatal(err)
	}
	if string(res.SC) != `{"n":12345678901234567890123,"f":1.50,"s":"<&>"}` {
		t.Errorf("echo structuredContent = %s", res.SC)
	}
}

// compactJSON removes insignificant whitespace only: numbers, strings and
// escapes keep their bytes.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// testbackend's Odd and OddError results, byte for byte.
const (
	tbOdd      = `{ "content": [ {"type":"hologram","data":"AAEC","extra":{"k":[1,2.50,3e2]}}, {"type":"text","text":"caf\u00e9 <&> \u2028"} ], "structuredContent": {"big":12345678901234567890123,"neg":-98765432109876543210,"exp":1E+400,"nested":{"id":9007199254740993}}, "_meta": {"example.com/trace":"t-1","n":18446744073709551616} }`
	tbOddError = `{"content":[{"type":"text","text":"it failed"}],"isError":true,"structuredContent":{"code":12345678901234567890123},"_meta":{"k":null}}`
)

// Progress from the backend reaches the client under the client's own token
// (string or number); the client's other _meta reaches the backend.
func TestBackendProgressAndMeta(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	for _, tok := range []string{`"tok-7"`, `42`} {
		mark := s.noteMark()
		r := s.call("tools/call", `{"name":"tb.progress","arguments":{"steps":3,"ms":100},"_meta":{"progressToken":`+tok+`}}`)
		if text := r.Result(t)["content"].([]any)[0].(map[string]any)["text"]; text != "done" {
			t.Errorf("progress result = %s", r)
		}
		testutil.WaitFor(t, 5*time.Second, "3 progress notifications", func() bool {
			return len(s.notesSince(mark, "notifications/progress")) >= 3
		})
		for i, n := range s.notesSince(mark, "notifications/progress") {
			var p struct {
				Params struct {
					Token    json.RawMessage `json:"progressToken"`
					Progress float64         `json:"progress"`
					Total    float64         `json:"total"`
					Message  string          `json:"message"`
				} `json:"params"`
			}
			json.Unmarshal(n.Raw, &p)
			if string(p.Params.Token) != tok || p.Params.Progress != float64(i+1) || p.Params.Total != 3 || p.Params.Message != fmt.Sprintf("step %d", i+1) {
				t.Errorf("progress %d = %s, want token %s", i, n, tok)
			}
		}
	}
	s.call("tools/call", `{"name":"tb.echo","arguments":{},"_meta":{"example.com/k":"v"}}`)
	meta, _ := s.structured("tb.stats", `{}`)["meta"].(map[string]any)
	if meta["example.com/k"] != "v" {
		t.Errorf("backend saw _meta %v, want example.com/k", meta)
	}
}

// The client's notifications/cancelled reaches the backend, and no response
// is sent for the cancelled id — not even when the backend answers anyway
// (testbackend's progress tool ignores cancellation and says "done").
func TestBackendClientCancellation(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	mark := s.noteMark()
	start := time.Now()
	id := s.request("tools/call", `{"name":"tb.progress","arguments":{"steps":8,"ms":100},"_meta":{"progressToken":"c"}}`)
	s.waitNote(mark, "notifications/progress", beReadTimeout) // the call is at the backend
	s.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user pressed stop"}}`)
	testutil.WaitFor(t, 10*time.Second, "the backend saw the cancellation", func() bool {
		return len(cancelled(s.structured("tb.stats", `{}`))) == 1
	})
	// The backend's own late "done" (after 8 × 100 ms) has come and gone.
	time.Sleep(time.Until(start.Add(1200 * time.Millisecond)))
	s.structured("tb.echo", `{}`) // everything before it has been written
	for _, m := range s.p.Strays() {
		if m.ID() == id {
			t.Errorf("a response was sent for the cancelled request: %s", m)
		}
	}
	if s.p.Answered(id) {
		t.Errorf("a response was sent for the cancelled request %s", id)
	}
}

// A banner-printing backend with a non-JSON line before every message works
// like any other (the lines are dropped and logged).
func TestBackendChattyStdout(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("chatty", "-banner", "5", "-chatty-stdout")), "e2e")
	wantTools(t, s.toolsList(), prefixed("chatty", ".", tbTools...)...)
	mark := s.noteMark()
	s.call("tools/call", `{"name":"chatty.progress","arguments":{"steps":2,"ms":50},"_meta":{"progressToken":"p"}}`)
	testutil.WaitFor(t, 5*time.Second, "progress through a chatty backend", func() bool {
		return len(s.notesSince(mark, "notifications/progress")) == 2
	})
	if got := s.callTool("chatty.odd", `{}`).Member("result"); string(got) != compactJSON(t, tbOdd) {
		t.Errorf("odd through a chatty backend: %s", got)
	}
	if !strings.Contains(s.p.stderr.String(), "Banner line 0") && !strings.Contains(s.p.stderr.String(), "not JSON") {
		t.Errorf("the dropped stdout lines are not logged:\n%s", s.p.stderr)
	}
}

// A backend's JSON-RPC error reaches the client with its code, message and
// data (byte for byte), plus "server".
func TestBackendRPCError(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	rpc := beServer{Name: "rpc", Command: node, Args: []string{testdataPath(t, "rpcerror_server.mjs")}}
	s := startRaw(t, beConfig(t, rpc, tb("tb")), "e2e")
	wantTools(t, s.toolsList(), "rpc.fail", "tb.echo")
	cases := []struct{ kind, data string }{
		{"object", `{"server":"rpc","why":"because","n":12345678901234567890123}`},
		{"string", `{"server":"rpc","data":"plain text"}`},
		{"none", `{"server":"rpc"}`},
	}
	for _, c := range cases {
		r := s.callTool("rpc.fail", `{"kind":"`+c.kind+`"}`)
		code, msg, _ := r.Error(t)
		if code != -32050 || msg != "backend says no" {
			t.Errorf("%s: %d %q, want -32050 \"backend says no\"", c.kind, code, msg)
		}
		var e struct {
			Data json.RawMessage `json:"data"`
		}
		json.Unmarshal(r.Member("error"), &e)
		if string(e.Data) != c.data {
			t.Errorf("%s: data = %s, want %s", c.kind, e.Data, c.data)
		}
	}
	s.structured("tb.echo", `{}`)
}

// startSDK connects a go-sdk client (protocol 2025-11-25) to the binary.
func startSDK(t *testing.T, cfg string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(gatewayBin, "--stdio", "--config", cfg)
	cmd.Env = baseEnv(t)
	stderr := &testutil.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-go", Version: "1"}, opts)
	cs, err := client.Connect(beCtx(t), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr)
		}
	})
	return cs
}

func sdkToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(beCtx(t), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// Sampling from a backend is forwarded to a client that declared it, and
// the client's answer goes back; a backend's list_changed reaches the client,
// which then sees the new tool.
func TestBackendSamplingAndListChanged(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 16)
	var sampled []string
	var smu sync.Mutex
	cs := startSDK(t, beConfig(t, tb("tb")), &mcp.ClientOptions{
		//lint:ignore SA1019 sampling is deprecated from protocol 2026-07-28 on; 2025-11-25 backends still use it and the gateway forwards it.
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			smu.Lock()
			sampled = append(sampled, text)
			smu.Unlock()
			//lint:ignore SA1019 as above
			return &mcp.CreateMessageResult{Model: "e2e-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled: " + text}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	wantTools(t, sdkToolNames(t, cs), "tb.sample", "tb.change")

	ctx := beCtx(t)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.sample", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tb.sample: %v", err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	content, _ := sc["content"].(map[string]any)
	if res.IsError || sc["model"] != "e2e-model" || content["text"] != "sampled: hi" {
		t.Errorf("tb.sample result = %+v (structured %v)", res, sc)
	}
	smu.Lock()
	if !slices.Equal(sampled, []string{"hi"}) {
		t.Errorf("client sampled %q, want [hi]", sampled)
	}
	smu.Unlock()

	for len(changed) > 0 { // list_changed from startup
		<-changed
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.change", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tb.change: %v %+v", err, res)
	}
	deadline := time.After(beReadTimeout)
	for found := false; !found; {
		select {
		case <-changed:
			found = slices.Contains(sdkToolNames(t, cs), "tb.added_1")
		case <-deadline:
			t.Fatalf("no list_changed with tb.added_1; tools %v", sdkToolNames(t, cs))
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.added_1", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError {
		t.Errorf("tb.added_1: %v %+v", err, res)
	}
}

// A client that did not declare sampling: the backend's request is refused,
// which testbackend reports as an isError result.
func TestBackendSamplingWithoutCapability(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	r := s.callTool("tb.sample", `{}`)
	if res := r.Result(t); res["isError"] != true {
		t.Errorf("tb.sample without sampling = %s, want isError", r)
	}
	for _, n := range s.notesSince(0, "sampling/createMessage") {
		t.Errorf("sampling request sent to a client without the capability: %s", n)
	}
}

// cancelled is testbackend stats' list of cancelled request ids (null when
// there are none).
func cancelled(stats map[string]any) []any {
	l, _ := stats["cancelled"].([]any)
	return l
}

func testdataPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// needNode returns the path of node; the tests that need it fail (never
// skip) without it.
func needNode(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (Node 20+) is required for this test: %v", err)
	}
	return p
}

// ---- sub-commands ----

// runCLI runs the binary to completion and returns stdout, stderr and the
// exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCLIEnv(t, baseEnv(t), args...)
}

func TestSubcommands(t *testing.T) {
	t.Parallel()
	hang := tb("slowpoke")
	hang.TimeoutMS = 500
	broken := tb("broken", "-fail-start", "7")
	broken.Restart = "never"
	cfg := beConfig(t, tb("tb"), hang, broken)

	t.Run("tools table", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "tools", "--config", cfg)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		lines := strings.Split(out, "\n")
		if !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "STRICT NAME") {
			t.Errorf("header = %q", lines[0])
		}
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "tb.echo" && f[1] == "tb__echo" && f[2] == "tb" {
				found = true
			}
		}
		if !found {
			t.Errorf("no row for tb.echo / tb__echo / tb:\n%s", out)
		}
		if !strings.Contains(out, "broken (failed)") {
			t.Errorf("the failed server is not mentioned:\n%s", out)
		}
	})
	t.Run("tools json", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "tools", "--config", cfg, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var raw struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		n := 0
		for _, tool := range raw.Tools {
			if tool["server"] == "tb" {
				n++
			}
			if tool["name"] == "tb.echo" && (tool["strict_name"] != "tb__echo" || tool["own_name"] != "echo") {
				t.Errorf("tb.echo = %v", tool)
			}
		}
		if n != len(tbTools) {
			t.Errorf("%d tools of tb, want %d:\n%s", n, len(tbTools), out)
		}
	})
	t.Run("status table", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "status", "--config", cfg)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		rows := map[string][]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 2 && rows[f[0]] == nil {
				rows[f[0]] = f
			}
		}
		if r := rows["tb"]; len(r) < 2 || r[1] != "ready" || !slices.Contains(r, strconv.Itoa(len(tbTools))) {
			t.Errorf("tb row = %v\n%s", r, out)
		}
		if r := rows["broken"]; len(r) < 2 || r[1] != "failed" || !strings.Contains(strings.Join(r, " "), "exit status 7") {
			t.Errorf("broken row = %v\n%s", r, out)
		}
		if !strings.Contains(out, "failing at start with 7") {
			t.Errorf("no stderr tail of the failed server:\n%s", out)
		}
	})
	t.Run("status json", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "status", "--config", cfg, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var v struct {
			Servers []struct {
				Name       string   `json:"name"`
				State      string   `json:"state"`
				Tools      int      `json:"tools"`
				Error      string   `json:"error"`
				StderrTail []string `json:"stderr_tail"`
				PID        int      `json:"pid"`
				StartedAt  string   `json:"started_at"`
			} `json:"servers"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(v.Servers) != 3 {
			t.Fatalf("servers = %+v", v.Servers)
		}
		if s := v.Servers[0]; s.Name != "tb" || s.State != "ready" || s.Tools != len(tbTools) || s.PID == 0 || s.StartedAt == "" {
			t.Errorf("tb = %+v", s)
		}
		if s := v.Servers[2]; s.Name != "broken" || s.State != "failed" || !strings.Contains(s.Error, "exit status 7") ||
			!slices.ContainsFunc(s.StderrTail, func(l string) bool { return strings.Contains(l, "failing at start with 7") }) {
			t.Errorf("broken = %+v", s)
		}
	})
	t.Run("call ok", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"tb.echo", "tb__echo"} {
			out, errOut, code := runCLI(t, "call", name, `{"n":12345678901234567890123}`, "--config", cfg)
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s\n%s", name, code, out, errOut)
			}
			if !strings.Contains(out, `"structuredContent"`) || !strings.Contains(out, "12345678901234567890123") {
				t.Errorf("%s printed:\n%s", name, out)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("%s: not JSON: %v\n%s", name, err, out)
			}
		}
	})
	t.Run("call errors", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			args []string
			want string
			code int
		}{
			{[]string{"tb.odd", `{"isError":true}`}, `"isError": true`, 1},
			{[]string{"slowpoke.hang"}, `"code": -32001`, 1},
			{[]string{"broken.echo", `{}`}, `"code": -32000`, 1},
			{[]string{"nope.tool", `{}`}, `"code": -32602`, 1},
			{[]string{"tb.echo", `not json`}, "", 2},
		}
		for _, c := range cases {
			out, errOut, code := runCLI(t, append(append([]string{"call"}, c.args...), "--config", cfg)...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("call %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errOut)
			}
		}
	})
}

// beCtx is a context for one client operation, bounded by beReadTimeout.
func beCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), beReadTimeout)
	t.Cleanup(cancel)
	return ctx
}

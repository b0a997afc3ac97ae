package main

// End-to-end tests of the backends behind the real binary (docs/design.md):
// the scriptable testbackend (backends/testbackend) configured as one or
// more servers — lists and filters, failures, crashes and restarts,
// timeouts, noisy output, a backend's own errors.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

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
	if !strings.Contains(s.Stderr.String(), "broken") {
		t.Errorf("the failure of broken is not logged:\n%s", s.Stderr)
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
	childGone := childGoneCheck(t, s.Cmd.Process.Pid, "crashme")

	mark := s.Mark()
	slowID := s.Request("tools/call", `{"name":"tb.progress","arguments":{"steps":600,"ms":100},"_meta":{"progressToken":"p"}}`)
	s.WaitNote(mark, "notifications/progress", testutil.DefaultTimeout) // the long call is at the backend
	crashID := s.Request("tools/call", `{"name":"tb.crash","arguments":{}}`)
	for _, id := range []string{slowID, crashID} {
		r := s.Await(id, testutil.DefaultTimeout)
		code, msg, data := r.Error(t)
		wantNotRunning(t, code, msg, data, "tb", "crashed", "exit status 3", "crashing now")
	}
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	listed := s.Mark()
	names := s.toolsList()
	// The restart (after 1 s) may already have brought them back on a very
	// slow machine; only then is the list allowed to show them.
	restartedEarly := len(withPrefix(names, "tb.")) != 0
	if restartedEarly && !strings.Contains(s.Stderr.String(), "restarting backend") {
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
	deadline := time.Now().Add(testutil.DefaultTimeout)
	for !restartedEarly {
		s.WaitNote(listed, "notifications/tools/list_changed", time.Until(deadline))
		listed = s.Mark()
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
	time.Sleep(200 * time.Millisecond) // no restart comes (a negative check: time must pass)
	code, msg, data = s.callTool("never.echo", `{}`).Error(t)
	wantNotRunning(t, code, msg, data, "never", "crashed", "exit status 5", "crashing now")
	wantNoTools(t, s.toolsList(), "never.echo")
}

// A hung tool times out with -32001 and the data of docs/errors.md (that it
// comes at the deadline is checked on synctest's clock by the wire script
// gateway/testdata/scripts/fixed-timeout-cancellation-after-request.txtar);
// the backend is told (notifications/cancelled), kept, and works next.
// timeout_ms of the server and DEFAULT_TIMEOUT both apply.
func TestBackendTimeout(t *testing.T) {
	t.Parallel()
	own := tb("tb")
	own.TimeoutMS = 1200
	s := startRaw(t, beConfig(t, own, tb("dflt")), "e2e", "DEFAULT_TIMEOUT=900ms")
	s.toolsList()

	hangID := s.Request("tools/call", `{"name":"tb.hang","arguments":{}}`)
	dfltID := s.Request("tools/call", `{"name":"dflt.hang","arguments":{}}`)
	cases := []struct {
		id, server, tool, msg string
		ms                    int
	}{
		{hangID, "tb", "tb.hang", "Tool 'tb.hang' timed out after 1.2s", 1200},
		{dfltID, "dflt", "dflt.hang", "Tool 'dflt.hang' timed out after 900ms", 900},
	}
	for _, c := range cases {
		r := s.Await(c.id, testutil.DefaultTimeout)
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

// A banner-printing backend with a non-JSON line before every message works
// like any other (the lines are dropped and logged).
func TestBackendChattyStdout(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("chatty", "-banner", "5", "-chatty-stdout")), "e2e")
	wantTools(t, s.toolsList(), prefixed("chatty", ".", tbTools...)...)
	mark := s.Mark()
	s.Call("tools/call", `{"name":"chatty.progress","arguments":{"steps":2,"ms":50},"_meta":{"progressToken":"p"}}`)
	testutil.WaitFor(t, 5*time.Second, "progress through a chatty backend", func() bool {
		return len(s.Since(mark, "notifications/progress")) == 2
	})
	testutil.Golden(t, "odd_result.json", s.callTool("chatty.odd", `{}`).Member("result"))
	if !strings.Contains(s.Stderr.String(), "Banner line 0") && !strings.Contains(s.Stderr.String(), "not JSON") {
		t.Errorf("the dropped stdout lines are not logged:\n%s", s.Stderr)
	}
}

// A backend's JSON-RPC error reaches the client with its code, message and
// data (byte for byte), plus "server".
func TestBackendRPCError(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	rpc := beServer{Name: "rpc", Command: node, Args: []string{testdataPath("rpcerror_server.mjs")}}
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

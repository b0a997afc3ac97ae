package gateway

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// A caller cannot start runs without bound (each holds a VM of up to
// memory_bytes): past gateway.code_mode_limits.runs of its own under way,
// or runs_total in the whole gateway, a run is refused with an error
// result naming the limit; once a run ends, the next is admitted again.
// Each anonymous session is a caller of its own; the runs' goroutines all
// exit when they are cancelled.
func TestRunScriptConcurrentRunsBounded(t *testing.T) {
	// Not parallel: it reads the process's goroutines.
	e := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) {
		c.Gateway.CodeModeLimits.Runs, c.Gateway.CodeModeLimits.RunsTotal = 2, 3
	}}, testServer("a"))
	one, two := e.stdio(t, `{}`), e.stdio(t, `{}`)
	active := func() float64 {
		return num(one.Call("tools/call", `{"name":"a.stats","arguments":{}}`).Result(t)["structuredContent"].(map[string]any)["active"])
	}
	scriptOut(t, runScript(one, `return (await tools["a.echo"]({v: 1})).v`)) // the backend is up

	hang := scriptParams(`await tools["a.hang"]({}); return "never"`, "")
	var held []func()
	start := func(c *rawClient) {
		id := c.Request("tools/call", hang)
		held = append(held, func() {
			c.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"done"}}`)
		})
	}
	start(one)
	start(one)
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return active() == 2 }) {
		t.Fatal("the two runs never reached the backend")
	}
	if got := scriptFailed(t, runScript(one, `return 1`)); !strings.HasPrefix(got, "run_script refused: 2 of your runs are already under way, your limit (gateway.code_mode_limits.runs)") {
		t.Errorf("a third run of one caller: %q", got)
	}
	start(two) // another caller: its own count
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return active() == 3 }) {
		t.Fatal("the other session's run never reached the backend")
	}
	if got := scriptFailed(t, runScript(two, `return 1`)); !strings.HasPrefix(got, "run_script refused: the gateway already runs 3 scripts, its limit (gateway.code_mode_limits.runs_total)") {
		t.Errorf("a run over the gateway's total: %q", got)
	}
	// A refused run started nothing; a direct call is not a run.
	if active() != 3 {
		t.Errorf("%v calls at the backend, want 3", active())
	}

	held[0]()
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return active() == 2 }) {
		t.Fatal("the cancelled run's call is still at the backend")
	}
	// The run's end follows its call's cancellation: until it is counted
	// out, the next is still refused.
	var last testutil.Msg
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		last = runScript(one, `return "admitted"`)
		return last.Result(t)["isError"] != true
	}) {
		t.Fatalf("not admitted again after a run ended: %s", last)
	}
	if out, _ := scriptOut(t, last); out["result"] != "admitted" {
		t.Errorf("after a run ended: %v", out)
	}

	for _, cancel := range held[1:] {
		cancel()
	}
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		e.gw.scriptRuns.mu.Lock()
		defer e.gw.scriptRuns.mu.Unlock()
		return e.gw.scriptRuns.total == 0 && len(e.gw.scriptRuns.by) == 0
	}) {
		t.Fatal("runs still counted after they all ended")
	}
	// No goroutine of a run is left (the backends' own come and go).
	var stacks string
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(stacks, "gateway/internal/script.") && !strings.Contains(stacks, "gateway.(*front).runScript")
	}) {
		t.Fatalf("a run's goroutines are left:\n%s", stacks)
	}
}

// Over HTTP a caller is its identity: the sessions it opens, and its
// requests of 2026-07-28 (no session), share its runs; another identity
// has its own.
func TestRunScriptRunsPerIdentity(t *testing.T) {
	t.Parallel()
	g := newPolicyGW(t, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy"
		c.Gateway.CodeModeLimits.Runs = 1
	}, testServer("a"))
	sid, _ := g.sessionOf("alice", `{}`)
	done := make(chan string, 1)
	go func() {
		// Answered once its session ends (below).
		req, _ := http.NewRequest(http.MethodPost, g.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+scriptParams(`await tools["a.hang"]({}); return "never"`, "")+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Who", "alice")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set(sessionIDHeader, sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(body)
	}()
	dan := g.session("dan")
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		return strings.Contains(dan(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.stats","arguments":{}}}`), `"active":1`)
	}) {
		t.Fatal("alice's run never reached the backend")
	}
	const refused = "run_script refused: 1 of your runs are already under way, your limit (gateway.code_mode_limits.runs)"
	alice := g.session("alice")
	if out := alice(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + scriptParams(`return 1`, "") + `}`); !strings.Contains(out, refused) {
		t.Errorf("alice's run in another session: %s", out)
	}
	params := scriptParams(`return 1`, "")
	if out := g.call2026("alice", "gateway.run_script", params[1:len(params)-1]); !strings.Contains(out, refused) {
		t.Errorf("alice's run of 2026-07-28: %s", out)
	}
	if out := dan(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":` + scriptParams(`return "dan ran"`, "") + `}`); !strings.Contains(out, `"result":"dan ran"`) {
		t.Errorf("another identity's run: %s", out)
	}

	req, _ := http.NewRequest(http.MethodDelete, g.url+"/mcp", nil)
	req.Header.Set("X-Who", "alice")
	req.Header.Set(sessionIDHeader, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-done
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		return strings.Contains(alice(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":`+scriptParams(`return "alice ran"`, "")+`}`), `"result":"alice ran"`)
	}) {
		t.Error("alice's runs are still counted after her run ended")
	}
}

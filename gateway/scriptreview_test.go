package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// Tests of code mode from a security review (docs/code-mode.md, "Threat
// model"): each is an attack on the promise that a script's calls take the
// normal path.

// Under gateway.redact: results a secret in a tool's result reaches the
// script masked (its length is the mask's), and one the script puts
// together is masked in its return value, its console output and its
// uncaught error, as in any tool's result.
func TestRunScriptRedacts(t *testing.T) {
	t.Parallel()
	const secret = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	const built = `"ghp_" + "1234567890abcdefghijABCDEFGHIJ123456"`
	c := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) { c.Gateway.Redact = "results" }}, testServer("a")).stdio(t, `{}`)
	const mask = "[redacted:github-token]"
	if out, _ := scriptOut(t, runScript(c, `const r = await tools["a.echo"]({k: "`+secret+`"}); return r.k.length`)); num(out["result"]) != float64(len(mask)) {
		t.Errorf("the script saw a secret of length %v, want the mask's %d", out["result"], len(mask))
	}
	for _, src := range []string{
		`return ` + built,
		`console.log(` + built + `); return 1`,
		`throw new Error(` + built + `)`,
		`await tools[` + built + `]({}); return 1`,
	} {
		if r := runScript(c, src).String(); strings.Contains(r, secret) || !strings.Contains(r, mask) {
			t.Errorf("%s: %s", src, r)
		}
	}
}

// Two destructive calls a script makes at once are put to the user at
// once, each with its arguments, and each answer goes to its own call: the
// one declined is refused, the one accepted runs. A client of 2026-07-28 is
// asked one after the other (one input_required answer at a time).
func TestRunScriptConfirmsTwoAtOnce(t *testing.T) {
	t.Parallel()
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":{"echo":{"annotations":{"destructiveHint":true}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) { c.Gateway.Confirm = "destructive" }}, testServer("d", "-tools-file", tools))
	const src = `const r = await Promise.allSettled([tools["d.echo"]({n: 1}), tools["d.echo"]({n: 2})]);
		return r.map(x => x.status === "fulfilled" ? "ran " + x.value.n : x.reason.message)`

	c := e.stdio(t, `{"elicitation":{}}`)
	id := c.Request("tools/call", scriptParams(src, ""))
	for _, ask := range []testutil.Msg{c.Next(), c.Next()} {
		answer := `{"action":"accept","content":{"confirm":true}}`
		if strings.Contains(string(ask.Member("params")), `{\"n\":1}`) {
			answer = `{"action":"decline"}`
		}
		c.Send(`{"jsonrpc":"2.0","id":` + string(ask.Member("id")) + `,"result":` + answer + `}`)
	}
	out, _ := scriptOut(t, c.Await(id, testutil.DefaultTimeout))
	if got, _ := json.Marshal(out["result"]); string(got) != `["d.echo was not run: the user declined it","ran 2"]` {
		t.Errorf("handshake era: %s", got)
	}

	pr := e.perRequest(t)
	meta := strings.TrimSuffix(strings.TrimPrefix(meta26, "{"), "}")
	q, _ := json.Marshal(src)
	r := pr.Call("tools/call", scriptParams(src, meta))
	for round := 0; r.Result(t)["resultType"] == "input_required"; round++ {
		if round == 2 {
			t.Fatalf("asked a third time: %s", r)
		}
		res := r.Result(t)
		answers := map[string]any{}
		for k := range res["inputRequests"].(map[string]any) {
			answers[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		}
		a, _ := json.Marshal(answers)
		state, _ := json.Marshal(res["requestState"])
		r = pr.Call("tools/call", `{"name":"gateway.run_script","arguments":{"script":`+string(q)+`},"_meta":`+meta26+
			`,"inputResponses":`+string(a)+`,"requestState":`+string(state)+`}`)
	}
	out, _ = scriptOut(t, r)
	if got, _ := json.Marshal(out["result"]); string(got) != `["ran 1","ran 2"]` {
		t.Errorf("2026-07-28: %s", got)
	}
}

// Fifty calls at once against a tool whose rate limit allows a burst of
// three: three run, the rest are refused with the limit's error.
func TestRunScriptRateLimitedInParallel(t *testing.T) {
	t.Parallel()
	g := newPolicyGW(t, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy"
		c.Gateway.RateLimits.Tools = []config.ToolRate{{Tools: []string{"a.echo"}, Rate: config.Rate{PerMinute: 1, Burst: 3}}}
	}, testServer("a"))
	out := g.session("alice")(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + scriptParams(`
		const r = await Promise.allSettled(Array.from({length: 50}, (_, i) => tools["a.echo"]({i})));
		return r.filter(x => x.status === "fulfilled").length + " ran, " + r.filter(x => x.status === "rejected" && x.reason.code === -32029).length + " limited"`, "") + `}`)
	if !strings.Contains(out, `"result":"3 ran, 47 limited"`) {
		t.Errorf("%s", out)
	}
}

// A backend's result that all but fills the script's heap ends the run at
// the memory limit, named; it was reported as a script whose promise never
// settles (the engine dropped the job that resumes the script).
func TestRunScriptBigResultMemoryLimit(t *testing.T) {
	t.Parallel()
	c := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) { c.Gateway.CodeModeLimits.MemoryBytes = 8 << 20 }}, testServer("a")).stdio(t, `{}`)
	for _, src := range []string{
		`return (await tools["a.big"]({bytes: 3000000})).length`,
		`return (await Promise.all([1, 2].map(() => tools["a.big"]({bytes: 3000000})))).length`,
	} {
		if got := scriptFailed(t, runScript(c, src)); got != "run_script stopped: the script exceeded its memory limit (8 MiB)" {
			t.Errorf("%s: %q", src, got)
		}
	}
}

// Cancelling a run while one of its calls waits for the user's
// confirmation withdraws the question (the client is told it is
// cancelled), calls nothing, answers nothing, and ends the run (it is
// counted out); the user's late answer changes nothing.
func TestRunScriptCancelDuringConfirmation(t *testing.T) {
	t.Parallel()
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":{"echo":{"annotations":{"destructiveHint":true}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) { c.Gateway.Confirm = "destructive" }}, testServer("d", "-tools-file", tools))
	c := e.stdio(t, `{"elicitation":{}}`)
	id := c.Request("tools/call", scriptParams(`await tools["d.echo"]({x: 1}); return "ran"`, ""))
	ask := c.Next()
	if ask.Method() != "elicitation/create" {
		t.Fatalf("want the confirmation asked, got %s", ask)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"stop"}}`)
	if m := c.Next(); m.Method() != "notifications/cancelled" || !strings.Contains(string(m.Member("params")), `"requestId":`+string(ask.Member("id"))) {
		t.Errorf("want the question withdrawn, got %s", m)
	}
	c.Send(`{"jsonrpc":"2.0","id":` + string(ask.Member("id")) + `,"result":{"action":"accept","content":{"confirm":true}}}`)
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		e.gw.scriptRuns.mu.Lock()
		defer e.gw.scriptRuns.mu.Unlock()
		return e.gw.scriptRuns.total == 0
	}) {
		t.Fatal("the run did not end")
	}
	for _, r := range e.callRecords() {
		if r.Tool == "d.echo" && r.Outcome == "ok" {
			t.Errorf("the destructive call ran: %+v", r)
		}
	}
	if c.Answered(id) {
		t.Error("the cancelled run was answered")
	}
}

// The answer tools are the caller's as the policy gives them, from a
// script as directly: alice's rule allows gateway.answer*, bob's does not.
func TestRunScriptAnswerToolsByPolicy(t *testing.T) {
	t.Parallel()
	g := newPolicyGW(t, func(c *config.Config) { c.Gateway.ToolsMode, c.Gateway.AnswerTools = "lazy", true }, testServer("a"))
	const src = `try { return (await tools["answer"]({query: "hi"})).answer } catch (e) { return "refused: " + e.message }`
	for who, want := range map[string]string{"alice": `"result":"An answer."`, "bob": `"result":"refused: Tool not found: answer"`} {
		if out := g.session(who)(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + scriptParams(src, "") + `}`); !strings.Contains(out, want) {
			t.Errorf("%s: %s", who, out)
		}
	}
}

// run_script's arguments are read as the policy and the audit log read
// them: a second "Script" member is refused, not taken for the one run.
func TestRunScriptAmbiguousArguments(t *testing.T) {
	t.Parallel()
	c := newScriptEnv(t, scriptOpts{}, testServer("a")).stdio(t, `{}`)
	r := c.Call("tools/call", `{"name":"gateway.run_script","arguments":{"script":"return 1","Script":"return 2"}}`)
	if code, msg, _ := r.Error(t); code != -32602 || !strings.Contains(msg, "Script") {
		t.Errorf("%s", r)
	}
}

// A client of 2026-07-28 whose run is held for a confirmation and that
// never retries does not keep the run: it ends at its wall time, and is
// counted out. One that cannot be asked is refused with a message saying
// so, which the audit log records as the run's call refused.
func TestRunScriptHeldRunEnds(t *testing.T) {
	t.Parallel()
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":{"wipe":{"annotations":{"destructiveHint":true}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newScriptEnv(t, scriptOpts{mutate: func(c *config.Config) {
		c.Gateway.Confirm = "destructive"
		c.Gateway.CodeModeLimits.WallMS = 500
	}}, testServer("d", "-tools-file", tools))
	c := e.perRequest(t)
	meta := strings.TrimSuffix(strings.TrimPrefix(meta26, "{"), "}")
	if r := c.Call("tools/call", scriptParams(`await tools["d.wipe"]({n: 1}); return 1`, meta)); r.Result(t)["resultType"] != "input_required" {
		t.Fatalf("want the run held for the confirmation: %s", r)
	}
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		e.gw.scriptRuns.mu.Lock()
		defer e.gw.scriptRuns.mu.Unlock()
		return e.gw.scriptRuns.total == 0
	}) {
		t.Fatal("the held run never ended")
	}

	out, _ := scriptOut(t, c.Call("tools/call", scriptParams(`try { await tools["d.wipe"]({n: 1}); return "ran" } catch (e) { return e.message }`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c26","version":"1"}`)))
	if s, _ := out["result"].(string); !strings.HasPrefix(s, "d.wipe is marked destructive and gateway.confirm is destructive, but this client cannot ask you to confirm it") {
		t.Errorf("a client that cannot be asked: %v", out["result"])
	}
	recs := e.callRecords()
	if n := len(recs); n < 2 || recs[n-2].Tool != "d.wipe" || recs[n-2].Outcome != "call_refused" || recs[n-2].RunID == "" || recs[n-2].RunID != recs[n-1].RunID {
		t.Errorf("the refused call's record: %+v", recs)
	}
}

// A rate limit that names gateway.run_script (as the answer tools are
// named) bounds the caller's runs, each of which may take its wall time
// of CPU without calling a tool: the run over it is refused with the
// limit's error, as a direct call over a tool's limit is.
func TestRunScriptItselfRateLimited(t *testing.T) {
	t.Parallel()
	g := newPolicyGW(t, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy"
		c.Gateway.RateLimits.Tools = []config.ToolRate{{Tools: []string{"gateway.run_script"}, Rate: config.Rate{PerMinute: 1, Burst: 1}}}
	}, testServer("a"))
	alice := g.session("alice")
	run := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + scriptParams(`return "ran"`, "") + `}`
	if out := alice(run); !strings.Contains(out, `"result":"ran"`) {
		t.Fatalf("the first run: %s", out)
	}
	if out := alice(run); !strings.Contains(out, `"code":-32029`) || !strings.Contains(out, "Rate limit exceeded for tool gateway.run_script") {
		t.Errorf("the second run: %s", out)
	}
	if out := g.session("dan")(run); !strings.Contains(out, `"result":"ran"`) {
		t.Errorf("another caller's run: %s", out)
	}
}

// A tool scope that names gateway.run_script is required of whoever runs a
// script: a token without it is refused the run (and not the tools).
func TestRunScriptItselfScoped(t *testing.T) {
	t.Parallel()
	g := newPolicyGW(t, func(c *config.Config) {
		c.Gateway.ToolsMode = "lazy"
		c.Gateway.HTTP.OAuth.ToolScopes = []config.ToolScope{{Tools: []string{"gateway.run_script"}, Scopes: []string{"scripts"}}}
	}, testServer("a"))
	alice := g.session("alice")
	if out := alice(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + scriptParams(`return "ran"`, "") + `}`); !strings.Contains(out, `"code":-32030`) || !strings.Contains(out, "calling gateway.run_script needs the scope scripts") {
		t.Errorf("a run without the scope: %s", out)
	}
	if out := alice(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a.echo","arguments":{"v":1}}}`); !strings.Contains(out, `"structuredContent":{"v":1}`) {
		t.Errorf("a tool without a scope: %s", out)
	}
}

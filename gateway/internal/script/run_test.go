package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// textResult is a CallToolResult with one text item.
func textResult(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
	return b
}

// echo is a Call that answers each call with the tool's name and arguments
// as text.
func echo(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return textResult(name + " " + string(args)), nil
}

// mustRun runs src with echo unless opts has a Call, and fails the test on an
// error.
func mustRun(t *testing.T, src string, opts Options) Result {
	t.Helper()
	if opts.Call == nil {
		opts.Call = echo
	}
	res, err := Run(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Run(%q): %v", src, err)
	}
	return res
}

func TestRunReturnValue(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`return 1 + 1`, `2`},
		{`return {a: [1, "x", null, true]}`, `{"a":[1,"x",null,true]}`},
		{``, `null`},
		{`return undefined`, `null`},
		{`return () => 1`, `null`},
		{`return await Promise.resolve("later")`, `"later"`},
		{`const r = await tools["srv.tool"]({q: 1}); return r`, `"srv.tool {\"q\":1}"`},
		{`return await tools.plain()`, `"plain {}"`},
	} {
		res := mustRun(t, c.src, Options{})
		if string(res.Value) != c.want {
			t.Errorf("Run(%q) = %s, want %s", c.src, res.Value, c.want)
		}
	}
}

func TestRunReturnValueNotJSON(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`const o = {}; o.o = o; return o`, "circular"},
		{`return 1n`, "BigInt"},
		{`return {big: 2n}`, "BigInt"},
	} {
		_, err := Run(context.Background(), c.src, Options{})
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "cannot be converted to JSON") || !strings.Contains(se.Message, c.want) {
			t.Errorf("Run(%q) = %v, want a ScriptError about JSON and %s", c.src, err, c.want)
		}
	}
}

// TestRunResultConversion checks what a tool call resolves to: the
// structuredContent, else the text, else the whole result; members are read
// by their exact names, the last of repeated ones, as JSON.parse reads them.
func TestRunResultConversion(t *testing.T) {
	results := map[string]string{
		"structured": `{"content":[{"type":"text","text":"ignored"}],"structuredContent":{"n":1,"list":["a"]}}`,
		"one":        `{"content":[{"type":"text","text":"hello"}]}`,
		"several":    `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
		"image":      `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		"empty":      `{"content":[]}`,
		"cased":      `{"content":[{"type":"text","text":"t"}],"IsError":true,"StructuredContent":{"x":1}}`,
		"repeated":   `{"content":[{"type":"text","text":"r"}],"isError":true,"isError":false}`,
		"caseditem":  `{"content":[{"Type":"text","Text":"t"}]}`,
	}
	call := func(_ context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(results[name]), nil
	}
	for name, want := range map[string]string{
		"structured": `{"n":1,"list":["a"]}`,
		"one":        `"hello"`,
		"several":    `"a\nb"`,
		"image":      results["image"],
		"empty":      results["empty"],
		"cased":      `"t"`,
		"repeated":   `"r"`,
		"caseditem":  results["caseditem"],
	} {
		res := mustRun(t, fmt.Sprintf(`return await tools[%q]()`, name), Options{Call: call})
		if string(res.Value) != want {
			t.Errorf("tools[%q]() = %s, want %s", name, res.Value, want)
		}
	}
}

// TestRunToolErrors checks that a result with isError and a Call error
// reject with an Error the script catches: message, result, code.
func TestRunToolErrors(t *testing.T) {
	call := func(_ context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		switch name {
		case "fails":
			return json.RawMessage(`{"content":[{"type":"text","text":"no such row"}],"isError":true}`), nil
		case "denied":
			return nil, &jsonrpc.Error{Code: -32001, Message: "tool denied by policy"}
		case "broken":
			return nil, errors.New("backend gone")
		}
		return json.RawMessage(`not json`), nil
	}
	src := `
		const out = {};
		for (const name of ["fails", "denied", "broken", "garbage"]) {
			try {
				await tools[name]();
				out[name] = "resolved";
			} catch (e) {
				out[name] = {isError: e instanceof Error, message: e.message, code: e.code, result: e.result, tool: e.tool};
			}
		}
		return out`
	res := mustRun(t, src, Options{Call: call})
	var got map[string]struct {
		IsError bool            `json:"isError"`
		Message string          `json:"message"`
		Code    *int            `json:"code"`
		Result  json.RawMessage `json:"result"`
		Tool    string          `json:"tool"`
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("%s: %v", res.Value, err)
	}
	if g := got["fails"]; !g.IsError || g.Message != "no such row" || !strings.Contains(string(g.Result), `"isError":true`) || g.Code != nil || g.Tool != "fails" {
		t.Errorf("isError result: %+v", g)
	}
	if g := got["denied"]; !g.IsError || g.Message != "tool denied by policy" || g.Code == nil || *g.Code != -32001 {
		t.Errorf("JSON-RPC error: %+v", g)
	}
	if g := got["broken"]; !g.IsError || g.Message != "backend gone" || g.Code != nil || g.Result != nil {
		t.Errorf("Call error: %+v", g)
	}
	if g := got["garbage"]; !g.IsError || !strings.Contains(g.Message, "not a CallToolResult") {
		t.Errorf("invalid result: %+v", g)
	}
}

// TestRunUncaughtToolError checks that an isError the script does not catch
// ends the run with a ScriptError carrying the tool's message.
func TestRunUncaughtToolError(t *testing.T) {
	call := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"quota exceeded"}],"isError":true}`), nil
	}
	_, err := Run(context.Background(), `await tools.x()`, Options{Call: call})
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "Error: quota exceeded" || se.Stack != "    at script:1:14\n" {
		t.Fatalf("Run = %#v, want ScriptError \"Error: quota exceeded\" at the call", err)
	}
}

func TestRunArguments(t *testing.T) {
	var mu sync.Mutex
	var got []string
	call := func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		got = append(got, name+" "+string(args))
		mu.Unlock()
		return textResult("ok"), nil
	}
	mustRun(t, `await tools.a(); await tools.b({x: "y", n: [1, 2]}); await tools.c(Object.create(null))`, Options{Call: call})
	if want := []string{`a {}`, `b {"x":"y","n":[1,2]}`, `c {}`}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	for _, bad := range []string{`1`, `"s"`, `[1]`, `null`, `new Date()`, `new Map()`, `{toJSON: () => undefined}`, `{toJSON: () => [1]}`} {
		_, err := Run(context.Background(), `await tools.a(`+bad+`)`, Options{Call: call})
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "TypeError") || !strings.Contains(se.Message, "must") {
			t.Errorf("tools.a(%s): %v, want a TypeError about the arguments", bad, err)
		}
	}
	if len(got) != 3 {
		t.Errorf("calls with bad arguments reached Call: %q", got)
	}
}

func TestRunConsole(t *testing.T) {
	res := mustRun(t, `
		console.log("a", 1, {b: [2]}, null, undefined);
		console.info("i");
		console.warn("w");
		console.error(new TypeError("bad"));
		const o = {}; o.o = o;
		console.log(o);
		return 0`, Options{})
	want := []string{`a 1 {"b":[2]} null undefined`, `i`, `warn: w`, `error: TypeError: bad`, `[object Object]`}
	if len(res.Logs) != len(want) {
		t.Fatalf("logs = %q, want %q", res.Logs, want)
	}
	for i := range want {
		if !strings.HasPrefix(res.Logs[i], want[i]) {
			t.Errorf("log %d = %q, want %q", i, res.Logs[i], want[i])
		}
	}
}

// TestRunParallel checks that Promise.all runs calls at once, up to
// Limits.Parallel: each call waits until Parallel calls are in flight, which
// never happens if they run one after the other, and the run counts how many
// were in flight at most.
func TestRunParallel(t *testing.T) {
	const parallel = 3
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	arrived := 0
	full := make(chan struct{})
	call := func(ctx context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		arrived++
		if arrived == parallel {
			close(full)
		}
		mu.Unlock()
		select {
		case <-full:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return textResult(name), nil
	}
	var progress []string
	res := mustRun(t, `return await Promise.all([1, 2, 3, 4, 5, 6, 7].map(i => tools["t" + i]()))`, Options{
		Call:     call,
		Limits:   Limits{Parallel: parallel},
		Progress: func(calls int, name string) { progress = append(progress, fmt.Sprintf("%d %s", calls, name)) },
	})
	if string(res.Value) != `["t1","t2","t3","t4","t5","t6","t7"]` || res.Calls != 7 {
		t.Errorf("Run = %s, %d calls", res.Value, res.Calls)
	}
	if most.Load() != parallel {
		t.Errorf("at most %d calls in flight, want %d", most.Load(), parallel)
	}
	if len(progress) != 7 || !strings.HasPrefix(progress[0], "1 t") || !strings.HasPrefix(progress[6], "7 t") {
		t.Errorf("progress = %q", progress)
	}
}

// allowedGlobals are the global object's own properties a run may see: the
// language's built-ins and the tool API. The test fails if anything else
// appears, such as the std, os or print of quickjs-libc, or state a
// previous run left.
var allowedGlobals = strings.Fields(`Error EvalError RangeError ReferenceError SyntaxError TypeError URIError
	InternalError AggregateError Array Object Function Iterator parseInt parseFloat isNaN isFinite
	decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape Infinity NaN undefined
	eval Number Boolean String Math Reflect Symbol globalThis BigInt Date RegExp JSON Proxy Map Set
	WeakMap WeakSet ArrayBuffer SharedArrayBuffer Uint8ClampedArray Int8Array Uint8Array Int16Array
	Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array Float16Array Float32Array
	Float64Array DataView Atomics Promise WeakRef FinalizationRegistry tools console`)

// globalsSrc returns the global names a run sees that are not allowed, by
// way of the Function constructor, as an escape would.
const globalsSrc = `
	const g = constructor.constructor("return this")();
	const allowed = new Set(%s);
	return Object.getOwnPropertyNames(g).filter(n => !allowed.has(n))`

func checkGlobals(t *testing.T) {
	t.Helper()
	allowed, _ := json.Marshal(allowedGlobals)
	res := mustRun(t, fmt.Sprintf(globalsSrc, allowed), Options{})
	if string(res.Value) != `[]` {
		t.Errorf("globals beyond the built-ins and the tool API: %s", res.Value)
	}
}

func TestRunGlobals(t *testing.T) {
	checkGlobals(t)
	res := mustRun(t, `return [typeof require, typeof fetch, typeof setTimeout, typeof setInterval,
		typeof print, typeof std, typeof os, typeof __host, typeof process, typeof module]`, Options{})
	if want := `["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`; string(res.Value) != want {
		t.Errorf("host names = %s, want all undefined", res.Value)
	}
}

// TestRunNoModules checks that a script loads no module, dynamically or
// statically.
func TestRunNoModules(t *testing.T) {
	for _, src := range []string{
		`return await import("os")`,
		`return await import("std")`,
		`return await import("./x.js")`,
		`import * as os from "os"`,
		`return require("fs")`,
		`return await fetch("http://127.0.0.1/")`,
		`return eval("__host")("call", 1, "x", "{}")`,
		`return Function("return __host")()`,
	} {
		_, err := Run(context.Background(), src, Options{})
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("Run(%q) = %v, want a ScriptError", src, err)
		}
	}
}

// TestRunErrorPlace checks that a ScriptError names the place in the
// script's own text, line 2 here, and keeps the prelude's frames out of the
// stack.
func TestRunErrorPlace(t *testing.T) {
	for _, c := range []struct{ src, message, stack string }{
		{"const a = 1;\nreturn a +;", "SyntaxError: unexpected token in expression: ';' (line 2, column 11)", "    at script:2:11\n"},
		{"const a = 1;\nnull.x", "TypeError: cannot read property 'x' of null", "    at script:2:5\n"},
		{"const a = 1;\nawait tools.x(5)", `TypeError: tools["x"]: the arguments must be a plain object like {"key": "value"}, got number`, "    at script:2:14\n"},
		{"const f = () => {\n  throw new RangeError('r')\n};\nf()", "RangeError: r", "    at script:2:23\n    at script:4:2\n"},
	} {
		_, err := Run(context.Background(), c.src, Options{})
		var se *ScriptError
		if !errors.As(err, &se) || se.Message != c.message || se.Stack != c.stack {
			t.Errorf("Run(%q) = %#v, want message %q and stack %q", c.src, err, c.message, c.stack)
		}
	}
}

// TestRunUnreadableException checks that an exception whose reading throws
// (a Proxy whose traps throw, a getter that throws) still ends the run with
// a ScriptError, not as a promise that never settles.
func TestRunUnreadableException(t *testing.T) {
	for _, src := range []string{
		`throw new Proxy({}, {getPrototypeOf() { throw 1 }, get() { throw 2 }})`,
		`const e = new Error("x"); Object.defineProperty(e, "name", {get() { throw new Error("getter") }}); throw e`,
		`console.log(new Proxy({}, {getPrototypeOf() { throw 1 }, get() { throw 2 }})); return 1`,
	} {
		_, err := Run(context.Background(), src, Options{})
		var se *ScriptError
		if err != nil && (!errors.As(err, &se) || strings.Contains(se.Message, "never settles")) {
			t.Errorf("Run(%q) = %v, want a ScriptError", src, err)
		}
	}
}

// TestRunNeverSettles checks that a script awaiting a promise nothing can
// settle ends at once instead of waiting for the wall time.
func TestRunNeverSettles(t *testing.T) {
	_, err := Run(context.Background(), `await new Promise(() => {})`, Options{Limits: Limits{Wall: time.Hour}})
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "never settles") {
		t.Fatalf("Run = %v, want a ScriptError saying the promise never settles", err)
	}
}

// TestRunSelfFeedingJobs checks that a promise chain that feeds itself ends
// at the wall time, as the time limit: the engine stops draining such a
// queue after 1<<20 jobs with an error of its own, which Run returned.
func TestRunSelfFeedingJobs(t *testing.T) {
	// f returns nothing: each job queues the next and nothing piles up,
	// so the queue feeds itself past the engine's bound of 2^20 jobs a
	// drain and only the wall time ends it. (A chain whose f returns the
	// promise holds memory as it grows, and may run out of it before
	// the wall time: the "then loop" of TestRunHostile.)
	_, err := Run(context.Background(), `const f = () => { Promise.resolve().then(f) }; f(); await new Promise(() => {})`, Options{Limits: Limits{Wall: 4 * time.Second}})
	checkHostile(t, "time", err)
}

// TestRunOutputLimit checks that console output and the return value count
// against Limits.Output.
func TestRunOutputLimit(t *testing.T) {
	lim := Limits{Output: 1000}
	mustRun(t, `console.log("x".repeat(400)); return "y".repeat(400)`, Options{Limits: lim})
	for _, src := range []string{
		`for (;;) console.log("x".repeat(100))`,
		`for (;;) try { console.log("x".repeat(100)) } catch (e) {}`,
		`return "x".repeat(2000)`,
		`console.log("x".repeat(600)); return "y".repeat(600)`,
	} {
		res, err := Run(context.Background(), src, Options{Limits: lim})
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != "output" || le.Value != "1000 bytes" {
			t.Errorf("Run(%q) = %v, want the output limit", src, err)
		}
		n := 0
		for _, l := range res.Logs {
			n += len(l)
		}
		if n > lim.Output {
			t.Errorf("Run(%q) kept %d bytes of logs, over the limit", src, n)
		}
	}
}

// hostile are scripts that must each end with the error named, leaving
// nothing behind for the next run. Each first sets a global, which the next
// run must not see.
var hostile = []struct {
	name  string
	src   string
	lim   Limits
	limit string // the LimitError's Limit, or "" for a ScriptError
}{
	{"busy loop", `while (true) {}`, Limits{Wall: time.Second}, "time"},
	{"catch the interrupt", `for (;;) { try { while (true) {} } catch (e) {} }`, Limits{Wall: time.Second}, "time"},
	{"finally continue", `for (;;) { try { for (;;) {} } finally { continue } }`, Limits{Wall: time.Second}, "time"},
	{"microtask loop", `for (;;) await null`, Limits{Wall: time.Second}, "time"},
	{"then loop", `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`, Limits{Wall: time.Second, Memory: 1 << 30}, "time"}, // a heap the chain does not fill within the wall time (TestRunSelfFeedingJobs)
	{"allocation loop", `const a = []; for (;;) a.push(new Array(1e5).fill(1))`, Limits{Memory: 16 << 20}, "memory"},
	{"string doubling", `let s = "x"; for (;;) s = (s + s).toUpperCase()`, Limits{Memory: 16 << 20}, "memory"},
	{"100 MB string", `return "x".repeat(100 * 1024 * 1024).length`, Limits{}, "memory"},
	{"deep recursion", `const f = n => f(n + 1) + 1; f(0)`, Limits{}, "stack"},
	{"10,000 calls", `for (let i = 0; i < 10000; i++) tools.x()`, Limits{}, "calls"},
	{"10,000 calls awaited", `for (let i = 0; i < 10000; i++) try { await tools.x() } catch (e) {}`, Limits{}, "calls"},
	{"10,000 calls at once", `await Promise.all(Array.from({length: 10000}, () => tools.x()))`, Limits{}, "calls"},
	{"Atomics.wait", `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)`, Limits{Wall: time.Minute}, ""},
	{"constructor escape", `constructor.constructor("return this")().process.exit(1)`, Limits{}, ""},
	{"import", `await import("os")`, Limits{}, ""},
	{"require", `require("child_process").exec("id")`, Limits{}, ""},
	{"fetch", `await fetch("http://127.0.0.1:1/")`, Limits{}, ""},
	{"eval host", `eval("std.loadFile('/etc/passwd')")`, Limits{}, ""},
}

func TestRunHostile(t *testing.T) {
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			call := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
				calls.Add(1)
				return echo(ctx, name, args)
			}
			res, err := Run(context.Background(), `globalThis.leftover = 1; `+c.src, Options{Call: call, Limits: c.lim})
			checkHostile(t, c.limit, err)
			if c.limit == "calls" && (res.Calls != DefaultCalls || calls.Load() > DefaultCalls) {
				t.Errorf("%d calls started, %d made, want %d", res.Calls, calls.Load(), DefaultCalls)
			}
			checkGlobals(t)
		})
	}
}

func checkHostile(t *testing.T, limit string, err error) {
	t.Helper()
	if limit == "" {
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("Run = %v, want a ScriptError", err)
		}
		return
	}
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		t.Errorf("Run = %v, want the %s limit", err, limit)
		return
	}
	if want := map[string]string{"stack": "call depth 5000", "calls": "100 calls"}[limit]; want != "" && le.Value != want {
		t.Errorf("the %s limit's value is %q, want %q", limit, le.Value, want)
	}
}

// TestRunHugeToolResult checks that a tool result larger than the VM's
// memory ends the run at the memory limit, also when the script would catch
// the call's failure.
func TestRunHugeToolResult(t *testing.T) {
	big := textResult(strings.Repeat("x", 40<<20))
	call := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return big, nil }
	for _, src := range []string{
		`return (await tools.x()).length`,
		`try { await tools.x() } catch (e) { return "caught" }`,
	} {
		_, err := Run(context.Background(), src, Options{Call: call, Limits: Limits{Memory: 16 << 20}})
		checkHostile(t, "memory", err)
	}
}

// TestRunQueuedArguments checks that the arguments of the calls queued and
// in flight, which live outside the VM, count against the memory limit.
func TestRunQueuedArguments(t *testing.T) {
	hang := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	src := `const s = "x".repeat(1 << 20); await Promise.all(Array.from({length: 100}, () => tools.x({s})))`
	_, err := Run(context.Background(), src, Options{Call: hang, Limits: Limits{Memory: 16 << 20}})
	checkHostile(t, "memory", err)
}

// TestRunHungCall checks that the wall time ends a run whose tool call never
// returns, and that the call's context is cancelled.
func TestRunHungCall(t *testing.T) {
	cancelled := make(chan struct{})
	call := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}
	_, err := Run(context.Background(), `await tools.slow()`, Options{Call: call, Limits: Limits{Wall: 200 * time.Millisecond}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "time" || le.Value != "200ms" {
		t.Fatalf("Run = %v, want the time limit (200ms)", err)
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("Run returned before the call's context was cancelled and the call returned")
	}
}

// TestRunCancel cancels the run's context while a call is in flight: Run
// returns ctx.Err() and the call sees its context cancelled.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	cancelled := make(chan struct{})
	call := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}
	go func() {
		<-started
		cancel()
	}()
	_, err := Run(ctx, `await tools.slow()`, Options{Call: call, Limits: Limits{Wall: time.Hour}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	default:
		t.Error("Run returned before the call's context was cancelled and the call returned")
	}
}

// TestRunCancelLoop ends the caller's context while the script loops and
// catches what it can: the watchdog's interrupt ends it, and Run returns the
// context's error, not a limit of its own.
func TestRunCancelLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, `for (;;) { try { while (true) {} } catch (e) {} }`, Options{Limits: Limits{Wall: time.Hour}})
	var le *LimitError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &le) {
		t.Errorf("Run = %v, want the context's context.DeadlineExceeded", err)
	}
}

// TestRunConcurrent runs hostile and ordinary scripts at once, for the race
// detector and to see that one run's limit does not reach another.
func TestRunConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			switch i % 4 {
			case 0:
				_, err := Run(context.Background(), `while (true) {}`, Options{Limits: Limits{Wall: 300 * time.Millisecond}})
				checkHostile(t, "time", err)
			case 1:
				_, err := Run(context.Background(), `let s = "x"; for (;;) s = (s + s).toUpperCase()`, Options{Limits: Limits{Memory: 8 << 20}})
				checkHostile(t, "memory", err)
			default:
				res, err := Run(context.Background(), `return (await Promise.all([tools.a({i: 1}), tools.b()])).join("|")`, Options{Call: echo})
				if err != nil || string(res.Value) != `"a {\"i\":1}|b {}"` {
					t.Errorf("Run = %s, %v", res.Value, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestRunGlobalsDoNotLeak checks that a global one run sets is gone in the
// next.
func TestRunGlobalsDoNotLeak(t *testing.T) {
	mustRun(t, `globalThis.x = 1; Object.prototype.polluted = 1; JSON.parse = () => 0; return x`, Options{})
	res := mustRun(t, `return [typeof x, typeof ({}).polluted, JSON.parse("2")]`, Options{})
	if string(res.Value) != `["undefined","undefined",2]` {
		t.Errorf("the second run sees %s", res.Value)
	}
}

// TestRunPreludeTamperProof checks that a script that replaces the built-ins
// the prelude uses still gets its tool results and its return value.
func TestRunPreludeTamperProof(t *testing.T) {
	res := mustRun(t, `
		JSON.parse = () => "tampered"; JSON.stringify = () => "tampered";
		Promise.prototype.then = function () { throw new Error("tampered") };
		Reflect.apply = () => { throw new Error("tampered") };
		const r = await tools.t({a: 1});
		return r`, Options{})
	if string(res.Value) != `"t {\"a\":1}"` {
		t.Errorf("Run = %s", res.Value)
	}
}

func TestLimitDefaults(t *testing.T) {
	got := Limits{}.WithDefaults()
	want := Limits{Wall: 30 * time.Second, Memory: 64 << 20, Calls: 100, Output: 64 << 10, Parallel: 8}
	if got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{64 << 20, "64 MiB"}, {64 << 10, "64 KiB"}, {1000, "1000 bytes"}} {
		if g := byteSize(c.n); g != c.want {
			t.Errorf("byteSize(%d) = %q, want %q", c.n, g, c.want)
		}
	}
}

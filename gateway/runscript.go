package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/script"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Code mode (docs/code-mode.md): the gateway's run_script tool runs a
// JavaScript program that calls tools (gateway/internal/script), so that a
// model writes one script instead of making a round trip per call. Every
// call the script makes is a tools/call of its own through the one core
// (toolcall.go), on the goroutine of the run that makes it: the caller's
// policy and profile, trust, scopes and rate limits, confirmation,
// redaction, the audit record (with the run's id), metrics and its span, as
// if the client had made it, under the run's context, so that cancelling
// the run cancels it.

// metaRunScript is run_script's own name, in the gateway's namespace.
const metaRunScript = "run_script"

// codeMode says which clients get run_script (gateway.code_mode).
type codeMode int

const (
	codeOff      codeMode = iota
	codeWithMeta          // where the meta tools are: lazy mode, auto's capped clients
	codeAll               // every client
)

// codeMode is gateway.code_mode, auto resolved by gateway.tools_mode.
func (g *Gateway) codeMode() codeMode {
	switch g.opts.Config.Gateway.CodeMode {
	case "true":
		return codeAll
	case "false":
		return codeOff
	}
	if g.opts.Config.Gateway.ToolsMode == "full" {
		return codeOff
	}
	return codeWithMeta
}

// scriptLimits are gateway.code_mode_limits as the engine takes them.
func (g *Gateway) scriptLimits() script.Limits {
	l := g.opts.Config.Gateway.CodeModeLimits
	return script.Limits{
		Wall:     time.Duration(l.WallMS) * time.Millisecond,
		Memory:   int64(l.MemoryBytes),
		Calls:    l.Calls,
		Output:   l.OutputBytes,
		Parallel: l.Parallel,
	}
}

// runScriptTool is run_script's definition under naming n. Its description
// is the model's whole manual, so it says in one paragraph how to call
// tools, what comes back, and the limits. It may call any tool, so it is
// annotated as call_tool is: it may destroy and reach the open world.
func (g *Gateway) runScriptTool(n namer) *mcp.Tool {
	name := func(own string) string { return n.name("gateway", own) }
	l := g.scriptLimits().WithDefaults() // what a run applies
	yes := true
	return &mcp.Tool{
		Name:  name(metaRunScript),
		Title: "Run a script that calls tools",
		Description: "Run JavaScript that calls the backend tools and returns only what you need: one call instead of a round trip per tool. " +
			"The script is the body of an async function: call a tool with `await tools[\"server.tool\"](args)` (the names " + name(metaFind) + " returns), " +
			"which resolves to the tool's structuredContent if it has one, else its text; run calls in parallel with `await Promise.all([...])`; " +
			"a tool's error (or a refusal) is thrown as an Error you can catch. `return` a JSON value: it is the result, with what `console.log` printed. " +
			"For the tools' TypeScript declarations, call " + name(metaFind) + " or " + name(metaDescribe) + " with format: \"ts\". " +
			"Limits per run: " + l.String() + "; no files, network, modules or timers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"script":{"type":"string","description":"JavaScript: the body of an async function that calls await tools[\"server.tool\"](args) and returns the result."}},` +
			`"required":["script"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"result":{"description":"The script's return value."},` +
			`"logs":{"type":"array","items":{"type":"string"},"description":"What console.log printed."},` +
			`"calls":{"type":"integer","description":"The tool calls the script made."}},` +
			`"required":["result","logs","calls"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes},
	}
}

// codeRun is a run of run_script as its calls' audit records name it:
// its id, and for a call the run makes, the name run_script was called by.
type codeRun struct {
	id, by string
}

// makes reports whether s is the run that makes a call, not the run's own
// call (or no run: nil).
func (s *codeRun) makes() bool { return s != nil && s.by != "" }

// scriptArgsMembers are run_script's arguments, for wire.Ambiguous.
var scriptArgsMembers = wire.Known{Names: []string{"script"}}

// runScript serves run_script for run: the script runs under ctx (the
// call's: cancelling the call cancels the run), and each tool it calls is
// a call of its own through the core (scriptCall). A limit the script hit,
// or an exception it did not catch, is the tool's error result, which the
// model reads; not a JSON-RPC error.
func (f *front) runScript(ctx context.Context, run *callRun, tc toolCall) (json.RawMessage, error) {
	var args struct {
		Script *string `json:"script"`
	}
	if a := bytes.TrimSpace(tc.args); len(a) > 0 {
		if amb := wire.Ambiguous(a, &scriptArgsMembers); amb != nil {
			return nil, errInvalidParams("arguments: " + amb.Error())
		}
		if err := json.Unmarshal(a, &args); err != nil {
			return nil, errInvalidParams("arguments: " + err.Error())
		}
	}
	if args.Script == nil {
		return nil, errInvalidParams("arguments: script is required: the JavaScript to run")
	}
	// run_script's own rate limit, named as the answer tools' are
	// (gateway.run_script): a run costs its wall time of CPU even if it
	// calls nothing.
	if err := f.admit(policy.Gateway, metaRunScript, tc.name); err != nil {
		return nil, err
	}
	end, refused := f.startRun()
	if refused != "" {
		return errorResult(refused), nil
	}
	defer end()
	// The run's id: every call it makes is audited with it, and so is the
	// run itself (recorder reads run.tc).
	id := rand.Text()
	run.tc.script = &codeRun{id: id}
	calls := &codeRun{id: id, by: tc.name}
	progress, stop := f.runProgress(tc, run.notify)
	res, err := script.Run(ctx, *args.Script, script.Options{
		Limits: f.g.scriptLimits(),
		Call: func(callCtx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
			callCtx, done := causedBy(callCtx, ctx)
			defer done()
			return f.scriptCall(callCtx, tc, calls, name, args)
		},
		Progress: progress,
	})
	stop()
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return scriptResult(res, err)
}

// causedBy returns ctx, ended with the cause of run when run ended it: the
// engine's context for a call ends with the run, but the engine may end it
// itself (the run is over) before run's cancellation reaches it, and the
// backend would be told the gateway cancelled rather than the client's
// reason. done releases it.
func causedBy(ctx, run context.Context) (context.Context, func()) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		// run is cancelled before anything derived from it.
		cause := context.Cause(run)
		if cause == nil {
			cause = context.Cause(ctx)
		}
		cancel(cause)
	})
	return out, func() {
		stop()
		cancel(nil)
	}
}

// scriptCall is one tools/call that the run of run_script's call outer
// makes: the core's synchronous form on the run's goroutine (awaitCall),
// with the run's context, the outer call's era, capabilities and _meta
// (less its progressToken: the run reports its own progress), and its
// request id, which a confirmation asked meanwhile is related to. Its span,
// when tracing, is a child of the run's.
func (f *front) scriptCall(ctx context.Context, outer toolCall, run *codeRun, name string, args json.RawMessage) (json.RawMessage, error) {
	tc := toolCall{id: outer.id, name: name, args: args, meta: outer.meta, era: outer.era, caps: outer.caps, script: run}
	var span trace.Span
	if t := f.g.opts.Tracer; t != nil {
		tool := spanText(name)
		ctx, span = t.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tool), attribute.String("mcp_gateway.run_id", run.id)))
	}
	raw, e := f.awaitCall(ctx, tc)
	if span != nil {
		endSpan(span, raw, e, nil)
	}
	if e != nil {
		return nil, e
	}
	return raw, nil
}

// runProgress reports a run to a client that asked for progress (a
// progressToken): a notification as each of the script's calls ends, with
// the number of calls so far. stop ends it, so that no progress follows
// the result. Without a token (or a notify) progress is nil.
func (f *front) runProgress(tc toolCall, notify func(*mcp.ProgressNotificationParams)) (progress func(calls int, name string), stop func()) {
	token := tc.progressToken()
	if len(token) == 0 || string(token) == "null" || notify == nil {
		return nil, func() {}
	}
	token = bytes.Clone(token)
	var mu sync.Mutex
	last, done := 0, false
	progress = func(calls int, name string) {
		mu.Lock()
		defer mu.Unlock()
		// The run's calls end on its goroutines in any order: progress
		// only ever increases.
		if done || calls <= last {
			return
		}
		last = calls
		notify(&mcp.ProgressNotificationParams{
			ProgressToken: json.RawMessage(token),
			Progress:      float64(calls),
			Message:       fmt.Sprintf("%d tool calls made; the latest ended: %s", calls, name),
		})
		f.flushClient()
	}
	return progress, func() {
		mu.Lock()
		done = true
		mu.Unlock()
	}
}

// scriptOutput is run_script's structuredContent.
type scriptOutput struct {
	Result json.RawMessage `json:"result"`
	Logs   []string        `json:"logs"`
	Calls  int             `json:"calls"`
}

// scriptResult is run_script's result for a run's outcome: the return
// value and logs as structuredContent, with a text rendering for clients
// that give the model text only; a limit or an uncaught exception as an
// error result naming it.
func scriptResult(res script.Result, err error) (json.RawMessage, error) {
	var limit *script.LimitError
	var thrown *script.ScriptError
	switch {
	case errors.As(err, &limit):
		return errorResult("run_script stopped: " + limitText(limit)), nil
	case errors.As(err, &thrown):
		msg := "run_script failed: the script threw an error it did not catch: " + thrown.Message
		if thrown.Stack != "" {
			msg += "\n" + thrown.Stack
		}
		return errorResult(msg), nil
	case err != nil:
		return nil, err
	}
	out := scriptOutput{Result: res.Value, Logs: res.Logs, Calls: res.Calls}
	if len(bytes.TrimSpace(out.Result)) == 0 {
		out.Result = json.RawMessage("null")
	}
	if out.Logs == nil {
		out.Logs = []string{}
	}
	text := string(out.Result)
	if s, ok := wire.Unquote(out.Result); ok {
		text = s
	}
	if len(out.Logs) > 0 {
		text += "\n\nconsole.log:\n" + strings.Join(out.Logs, "\n")
	}
	return mustJSON(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: out,
	}), nil
}

// errorResult is a tool result with isError whose one text content is msg.
func errorResult(msg string) json.RawMessage {
	return mustJSON(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true})
}

// limitText says which limit ended a run, and its value.
func limitText(e *script.LimitError) string {
	switch e.Limit {
	case "time":
		return fmt.Sprintf("the script exceeded its time limit (%s)", e.Value)
	case "memory":
		return fmt.Sprintf("the script exceeded its memory limit (%s)", e.Value)
	case "calls":
		return fmt.Sprintf("the script made more tool calls than its limit (%s)", e.Value)
	case "output":
		return fmt.Sprintf("the script's return value and console output exceeded their limit (%s)", e.Value)
	case "stack":
		return fmt.Sprintf("the script exceeded its stack limit (%s): too deep a recursion", e.Value)
	}
	return fmt.Sprintf("the script exceeded its %s limit (%s)", e.Limit, e.Value)
}

// everyClientScripts reports whether r is run_script and every client gets
// it (code_mode: true), in whichever tools mode.
func (g *Gateway) everyClientScripts(r toolRoute) bool {
	return r.kind == metaTool && r.own == metaRunScript && g.codeMode() == codeAll
}

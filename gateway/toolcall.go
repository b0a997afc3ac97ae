package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The tools/call core. Every front serves a tools/call through it: the
// session (stdio, Streamable HTTP, go-sdk's transports: sessionCall),
// Gateway.Call (the REST API and `mcp-gateway call`: waiter), lazy
// mode's call tools, whose call of a backend tool goes through the same
// steps as a direct one (callMeta), and each call a run_script run makes
// (scriptCall: a waiter on the run's goroutine, under the run's context). A call is started once (startCall)
// and ends once; what is done with its outcome is the front's
// (callHost.deliver). The synchronous form is await(start(...))
// (awaitCall).
//
// Its promises:
//
//   - Starting never blocks the caller on a backend. A call of a backend
//     tool in the current tables that can start without waiting for
//     anything starts on the caller's goroutine — the session's reader —
//     and ends on the backend's read loop, with no goroutine of its own
//     (backends.Manager.StartToolCall). Any other call runs in a goroutine
//     the front owns (callHost.spawn), since it may wait: for its server
//     to start, for the user's confirmation, for an answer tool.
//   - No backend tool is called before its admission, the same on every
//     path and in this order (begin): the route of its server's live list
//     (a snapshot's definition decides nothing, docs/trust.md), the
//     caller's scopes and rate limit, then the user's confirmation of a
//     destructive tool. A call that would have to wait for any of them is
//     never started inline: it is spawned, and admitted there.
//   - Every call ends by one ordered list of steps (end, then finish),
//     whichever way it ran: the backend call's span, the debug log, the
//     task record, the per-request era's task id, an input_required answer
//     put to a client of the handshake era, the JSON-RPC error, redaction,
//     the audit record and metrics (callEnd), and last the front's
//     delivery. A step that does not apply (no backend was called, no
//     tracer) is skipped. A step every tool call needs is added there, and
//     every front has it.

// callHost is what a front gives the core for one call.
type callHost interface {
	// inline reports whether the call may start on the calling goroutine
	// with its write held for the burst (backends.CallOptions.Batch): the
	// caller writes the backends' held calls before it waits for input
	// (the session's reader).
	inline() bool
	// context is the context of a call that runs in a goroutine, and how
	// to cancel it.
	context() (context.Context, backends.CancelFunc)
	// spawn runs fn in a goroutine the front owns, or reports false when
	// the front runs nothing more (it is closing).
	spawn(fn func()) bool
	// started records how to cancel the call and the backend that serves
	// it ("" when not known yet).
	started(cancel backends.CancelFunc, server string)
	// deliver takes the call's outcome, a result or an error, after every
	// other step. buffered: it is delivered on a backend's read loop (the
	// result is valid only while deliver runs) and may go out with that
	// loop's burst.
	deliver(result json.RawMessage, e *jsonrpc.Error, buffered bool)
}

// callRun is one tools/call through the core.
type callRun struct {
	f      *front
	host   callHost
	tc     toolCall // as the client sent it
	notify func(*mcp.ProgressNotificationParams)
	record callEnd // nil unless metrics, the audit log or redaction are on
	// ctx is the context of a call that runs in a goroutine; nil while it
	// runs on the caller's goroutine and the backend's read loop.
	ctx context.Context
	// be is the backend tools/call the call made, once it made one: the
	// call's own, or the one a meta tool made for it.
	be backendCall
}

// backendCall is a backend tools/call and what its end needs.
type backendCall struct {
	made        bool
	name        string     // the name it was called by
	server, own string     // the backend tool it calls (its route's)
	tc          *toolCall  // the call's own (callRun.tc), or the one a meta tool made
	span        trace.Span // its span, when tracing
	start       time.Time  // when it started; zero unless debug logging is on
	// release ends a call of a caller that cannot be asked anything
	// (callingUnaskable); nil for others.
	release func()
}

// errWouldWait is begin's answer for a call that may not wait (inline)
// when its admission would have to.
var errWouldWait = errors.New("the call would wait")

// startCall starts the tools/call tc for a front (h) in run, which the
// front keeps in its own record of the call (sessionCall, waiter), so that
// a call costs the core no allocation of its own. notify gets the call's
// progress; nil when the client asked for none.
func (f *front) startCall(run *callRun, tc toolCall, notify func(*mcp.ProgressNotificationParams), h callHost) {
	*run = callRun{f: f, host: h, tc: tc, notify: notify}
	run.record = f.recorder(run)
	if h.inline() {
		if r, ok := f.inlineRoute(tc.name); ok {
			opts, err := run.begin(context.Background(), false, tc.name, r, &run.tc)
			switch {
			case err == nil:
				// Written with the burst, before the reader waits
				// (FlushWrites); the call may end on the backend's
				// read loop before StartToolCall returns.
				opts.Batch = true
				server, own := run.be.server, run.be.own
				h.started(f.g.opts.Backends.StartToolCall(server, own, tc.args, opts, run.backendDone), server)
				return
			case err != errWouldWait:
				run.finish(nil, err, false)
				return
			}
		}
	}
	ctx, cancel := h.context()
	run.ctx = ctx
	if !h.spawn(func() {
		defer cancel(nil)
		// run.tc, not tc: a closure over tc would move it to the heap
		// on the inline path too.
		raw, err := f.callTool(ctx, run, run.tc)
		run.end(raw, err)
	}) {
		cancel(nil)
		h.deliver(nil, rpcError(context.Canceled, kindTool, tc.name, false), false)
		return
	}
	h.started(cancel, "")
}

// awaitCall is the synchronous form of a call: await(start(...)), for a
// caller that gets no progress: Gateway.Call, and a run_script run's calls
// (scriptCall), which run on the run's goroutines and end with its ctx.
func (f *front) awaitCall(ctx context.Context, tc toolCall) (json.RawMessage, *jsonrpc.Error) {
	w := &waiter{ctx: ctx}
	f.startCall(&w.run, tc, nil, w)
	return w.await()
}

// waiter is the front of a synchronous call. It runs the call on the
// caller's goroutine (spawn), so a synchronous call costs no goroutine:
// the call has ended when startCall returns.
type waiter struct {
	run    callRun
	ctx    context.Context
	done   bool
	result json.RawMessage
	err    *jsonrpc.Error
}

func (w *waiter) inline() bool { return false }
func (w *waiter) context() (context.Context, backends.CancelFunc) {
	return w.ctx, func(json.RawMessage) {}
}
func (w *waiter) spawn(fn func()) bool                { fn(); return true }
func (w *waiter) started(backends.CancelFunc, string) {}
func (w *waiter) deliver(result json.RawMessage, e *jsonrpc.Error, _ bool) {
	w.done, w.result, w.err = true, result, e
}

// await returns the call's outcome.
func (w *waiter) await() (json.RawMessage, *jsonrpc.Error) {
	if !w.done {
		// spawn ran the call to its delivery: nothing else ends it.
		panic("gateway: a synchronous call returned undelivered")
	}
	return w.result, w.err
}

// begin admits the call of backend tool r (called as name; tc is the
// backend call: a meta tool's is not the client's) and readies it,
// returning its options. wait false: the call may not wait (it starts
// inline, and its request's span is tc.span), and begin returns
// errWouldWait, before anything is taken from the caller's limits, when it
// would have to.
func (run *callRun) begin(ctx context.Context, wait bool, name string, r toolRoute, tc *toolCall) (backends.CallOptions, error) {
	f := run.f
	opts, err := f.backendOptions(*tc, run.notify)
	if err != nil {
		return opts, err
	}
	// Admission, in order: the live list's route, the scopes and rate
	// limit, the user's confirmation.
	if !wait {
		if !f.liveListed(r) || f.needsConfirm(r) {
			return opts, errWouldWait
		}
	} else if r, err = f.liveRoute(ctx, name, r); err != nil {
		return opts, err
	}
	if err := f.admit(r.server, r.own, name); err != nil {
		return opts, err
	}
	if f.needsConfirm(r) {
		if err := f.confirm(ctx, name, r, *tc); err != nil {
			return opts, err
		}
	}
	be := &run.be
	*be = backendCall{made: true, name: name, server: r.server, own: r.own, tc: tc}
	parent := ctx
	if !wait && tc.span != nil {
		parent = trace.ContextWithSpan(ctx, tc.span)
	}
	if f.g.opts.Tracer != nil {
		trace.SpanFromContext(parent).SetAttributes(attribute.String("mcp_gateway.server", r.server))
		var meta map[string]any
		be.span, meta = f.g.backendSpan(parent, "tools/call", r.server, r.own)
		opts.Meta = withTraceMeta(opts.Meta, meta)
	}
	if f.unaskable {
		be.release = f.g.callingUnaskable(r.server)
	}
	if cl := callerOf(ctx); cl.at != nil {
		// Before the backend is called: a request it sends at once must
		// find this call (clientFor), which the session learns of its
		// tool only once the goroutine serving it has started.
		cl.at(r.server)
	}
	if f.log.Enabled(context.Background(), slog.LevelDebug) {
		be.start = time.Now()
	}
	return opts, nil
}

// callBackend calls backend tool r for a call that runs in a goroutine:
// admitted (begin), then to its end.
func (f *front) callBackend(ctx context.Context, run *callRun, name string, r toolRoute, tc *toolCall) (json.RawMessage, error) {
	opts, err := run.begin(ctx, true, name, r, tc)
	if err != nil {
		return nil, err
	}
	be := &run.be
	return f.g.opts.Backends.CallTool(ctx, be.server, be.own, be.tc.args, opts)
}

// backendDone ends a call started inline, on the backend's read loop.
func (run *callRun) backendDone(raw json.RawMessage, err error) { run.end(raw, err) }

// end runs the end steps of a call that made a backend call, in order,
// then finish's. It runs on the backend's read loop for a call started
// inline (raw valid only while it runs), else on the call's goroutine.
func (run *callRun) end(raw json.RawMessage, err error) {
	f, be := run.f, &run.be
	if be.made {
		// 1. The backend call's span.
		if be.span != nil {
			endSpan(be.span, raw, nil, err)
		}
		// 2. The debug log.
		if !be.start.IsZero() {
			f.log.Debug("tools/call", "tool", be.name, "server", be.server, "duration", time.Since(be.start), "ok", err == nil)
		}
		// 3. The task a task-augmented call created, recorded as its
		// server's and this session's (tasks.go).
		if err == nil && be.tc.task != nil {
			f.recordTask(be.server, raw)
		}
		// 4. In the per-request era, the id of a task the backend
		// created, sealed (taskids.go).
		if err == nil && be.tc.era == wire.PerRequestEra {
			raw = f.createdTask(be.server, raw)
		}
		// 5. A backend's input_required answer to a client of the
		// handshake era: the client is asked, round after round, in a
		// goroutine (mrtr.go); the end goes on with the final answer.
		if err == nil && be.tc.era == wire.HandshakeEra && backends.InputRequired(raw) {
			if run.ctx == nil {
				run.fulfillLater(bytes.Clone(raw))
				return
			}
			raw, err = run.fulfill(run.ctx, raw)
		}
		if be.release != nil {
			be.release()
		}
	}
	run.finish(raw, err, run.ctx == nil)
}

// finish runs the steps every call ends with, in order. buffered: it runs
// on a backend's read loop.
func (run *callRun) finish(raw json.RawMessage, err error, buffered bool) {
	// 6. The error, as JSON-RPC.
	var e *jsonrpc.Error
	if err != nil {
		e = rpcError(err, kindTool, run.tc.name, run.f.g.opts.Config.Server.Debug)
		raw = nil
	}
	// 7. Redaction, the audit record, metrics (callrecord.go); a call
	// that could not be audited fails.
	if run.record != nil {
		raw, e = run.record(raw, e)
	}
	// 8. The front's delivery.
	run.host.deliver(raw, e, buffered && e == nil)
}

// fulfill answers a backend's input_required result for a client of the
// handshake era (backends.Fulfill), and returns the final one.
func (run *callRun) fulfill(ctx context.Context, first json.RawMessage) (json.RawMessage, error) {
	f, be := run.f, &run.be
	return backends.Fulfill(ctx, first, callerOf(ctx).ask, func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error) {
		again := *be.tc
		again.extra, again.caps = extra, nil
		opts, err := f.backendOptions(again, run.notify)
		if err != nil {
			return nil, err
		}
		return f.g.opts.Backends.CallTool(ctx, be.server, be.own, again.args, opts)
	})
}

// fulfillLater is fulfill for a call started inline, whose end runs on a
// backend's read loop: in a goroutine of the front's, which then finishes
// the call.
func (run *callRun) fulfillLater(first json.RawMessage) {
	h := run.host
	ctx, cancel := h.context()
	run.ctx = ctx
	if !h.spawn(func() {
		defer cancel(nil)
		raw, err := run.fulfill(ctx, first)
		if run.be.release != nil {
			run.be.release()
		}
		run.finish(raw, err, false)
	}) {
		cancel(nil)
		h.deliver(nil, rpcError(context.Canceled, kindTool, run.tc.name, false), false)
		return
	}
	h.started(cancel, run.be.server)
}

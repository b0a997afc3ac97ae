package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// toolCall is what serving a tools/call needs of its params; the
// arguments, task and _meta values stay raw, byte for byte.
type toolCall struct {
	id   json.RawMessage // the client's request id, for requests made during the call (confirm)
	name string
	args json.RawMessage
	task json.RawMessage // params.task: the call creates a task (tasks.go)
	meta json.RawMessage // params._meta, an object, or nil
	// extra are the params' other members (a retry's inputResponses and
	// requestState), forwarded as they are: an object, or nil.
	extra json.RawMessage
	// era is the request's (session.go's call.era); caps are what a
	// request of the per-request era declared, compacted (nil otherwise).
	era  wire.Era
	caps json.RawMessage
	// span is the request's span, when tracing: the parent of the
	// backend's (trace.go).
	span trace.Span
	// script is the run_script run this call is, or that makes it
	// (runscript.go), for its audit record; nil for any other call. One
	// pointer, since every call carries a toolCall (two strings added
	// 64 B per call on the hot path).
	script *codeRun
}

// progressToken is the call's _meta.progressToken as sent, or nil.
func (tc *toolCall) progressToken() json.RawMessage { return wire.Member(tc.meta, "progressToken") }

// decodeToolCall reads a tools/call's params (their members, as readMsg
// read them), with member names compared case-sensitively as go-sdk does.
func decodeToolCall(m *inMsg) (toolCall, error) {
	var tc toolCall
	if p := bytes.TrimSpace(m.Params); len(p) == 0 || string(p) == "null" {
		return tc, errInvalidParams("params: missing")
	}
	if !m.object {
		return tc, errInvalidParams("params must be an object")
	}
	var bad string
	for _, pm := range m.paramList() {
		name, v := pm.name, pm.value
		switch name {
		case "name":
			var ok bool
			if tc.name, ok = wire.Unquote(v); !ok {
				bad = "name must be a string"
			}
		case "arguments":
			tc.args = v
		case "task":
			if string(v) != "null" {
				tc.task = v
			}
		case "_meta":
			if string(v) == "null" {
				continue
			}
			// Valid JSON (readMsg decoded it): an object is one that
			// starts so; kept raw, read by the few that need a member.
			if v = bytes.TrimSpace(v); len(v) == 0 || v[0] != '{' {
				bad = "_meta must be an object"
			}
			tc.meta = v
		default:
			if tc.extra == nil {
				tc.extra = json.RawMessage(`{}`)
			}
			tc.extra, _ = wire.SetMember(tc.extra, name, v)
		}
	}
	if bad != "" {
		return tc, errInvalidParams(bad)
	}
	return tc, nil
}

// callTool routes the tools/call tc of run (the client's, or the one a meta
// tool makes for it) to whoever serves its tool, for a call that runs in a
// goroutine (startCall); its end is run's (callRun.end).
func (f *front) callTool(ctx context.Context, run *callRun, tc toolCall) (json.RawMessage, error) {
	if f.isAnswerTool(tc.name) {
		// The answer tools need no backend: never wait for them to start.
		return f.callAnswer(ctx, run, tc.name, tc)
	}
	r, ok := f.resolve(ctx, tc.name)
	if !ok {
		if fronts := f.ownCandidates(tc.name); len(fronts) > 1 {
			return nil, &ambiguousError{kindTool, tc.name, fronts}
		}
		return nil, f.unknown(kindTool, tc.name)
	}
	switch r.kind {
	case answerTool:
		return f.callAnswer(ctx, run, r.own, tc)
	case metaTool:
		if tc.script.makes() {
			// A script calls tools, not the meta tools (nor itself).
			return nil, &notFoundError{kindTool, tc.name}
		}
		return f.callMeta(ctx, run, r.own, tc)
	}
	return f.callBackend(ctx, run, tc.name, r, &tc)
}

func (f *front) isAnswerTool(name string) bool {
	return f.g.opts.Answer != nil && answer.IsTool(name)
}

// callAnswer runs an answer tool; a client that sent a progressToken gets
// progress while it runs (startProgress). The answer tools are the
// gateway's own (policy.Gateway, gateway.answer): one the caller may not
// use is not found, as lookupTool's tools, since callTool reaches them
// without it.
func (f *front) callAnswer(ctx context.Context, run *callRun, name string, tc toolCall) (json.RawMessage, error) {
	if e := f.grant().access.Explain(policy.Tool, policy.Gateway, name); !e.Allowed {
		f.deny(policy.Tool, tc.name, policy.Gateway, name, e)
		return nil, &notFoundError{kindTool, tc.name}
	}
	if err := f.admit(policy.Gateway, name, tc.name); err != nil {
		return nil, err
	}
	step, stop := f.startProgress(tc, run.notify)
	res, err := f.g.opts.Answer.CallWith(ctx, name, tc.args, answer.CallOptions{Step: step})
	stop()
	if err != nil {
		return nil, err
	}
	return wire.Marshal(answer.CallToolResult(res))
}

// resolve finds what a tool name routes to: the current tables; else the
// tables rebuilt from the backends ready now, so that a tool of a ready
// backend never waits for another one still starting; else, after waiting
// (within the startup timeout) for the backend the name's prefix names, or
// for all of them when no prefix matches, the tables again or an orphan of
// a backend that is down. A name the prefix's server's tools filter
// excludes waits for nothing. A client may call before listing
// (mcp-gateway call does).
func (f *front) resolve(ctx context.Context, name string) (toolRoute, bool) {
	if r, ok := f.lookupTool(name); ok {
		return r, true
	}
	f.rebuild(ctx, always)
	if r, ok := f.lookupTool(name); ok {
		return r, true
	}
	b := f.g.opts.Backends
	if r, ok, done := f.resolveCallers(ctx, name); done {
		return r, ok
	}
	if server, own, ok := f.prefixOwner(name, f.g.notReady(backends.Starting)); ok {
		if b.Excludes(server, own) {
			// The server's filter is on the name itself: nothing
			// its start lists can route it.
			return toolRoute{}, false
		}
		b.WaitServer(ctx, server)
		f.rebuild(ctx, always)
	} else {
		f.rebuild(ctx, settled)
	}
	if r, ok := f.lookupTool(name); ok {
		return r, true
	}
	return f.orphan(name)
}

// lookupTool finds a tool by its front name, else by the own name an app
// calls it by, when that names one tool only (apps.go); a tool the policy
// hides is not there.
func (f *front) lookupTool(name string) (toolRoute, bool) {
	t := f.tables()
	r, ok := t.tools[name]
	if !ok {
		if fronts := f.ownCandidatesIn(t, name); len(fronts) == 1 {
			r, ok = t.tools[fronts[0]]
		}
	}
	return r, ok && f.allowed(r)
}

// orphan finds the backend a name belongs to when that backend is not ready
// — it crashed, is restarting, or failed to start — so that the call fails
// with the backend's state and stderr rather than "Tool not found". A name
// is an orphan when its backend listed it before, or when it carries the
// prefix of a configured server that is not ready.
func (f *front) orphan(name string) (toolRoute, bool) {
	down := f.g.notReady()
	r, ok := f.tables().known[name]
	ok = ok && f.allowed(r)
	if ok && down[r.server] {
		return r, true
	}
	if server, own, ok := f.prefixOwner(name, down); ok && !f.g.opts.Backends.Excludes(server, own) {
		// The server's tools filter applies to the name itself: an
		// excluded tool is nobody's orphan.
		r := toolRoute{kind: backendTool, server: server, own: own}
		return r, f.allowed(r)
	}
	return toolRoute{}, false
}

// prefixOwner finds the server among these whose prefix (under this
// client's naming mode) a tool name carries, and the name without it.
func (f *front) prefixOwner(name string, among map[string]bool) (server, own string, ok bool) {
	n := f.declared().naming
	prefixes := f.g.prefixes()
	for server := range among {
		prefix := prefixes[server]
		if prefix == "" {
			continue
		}
		if own, ok := strings.CutPrefix(name, n.name(prefix, "")); ok && own != "" {
			return server, own, true
		}
	}
	return "", "", false
}

// notReady is the set of configured backends that are not ready, or, given
// states, of those in one of them.
func (g *Gateway) notReady(states ...backends.State) map[string]bool {
	out := make(map[string]bool)
	for _, st := range g.opts.Backends.Status() {
		if st.State != backends.Ready && (len(states) == 0 || slices.Contains(states, st.State)) {
			out[st.Name] = true
		}
	}
	return out
}

// reservedMeta is the _meta key prefix MCP reserves for the protocol
// itself (per-request protocol version, client info and capabilities of
// 2026-07-28 clients): it describes the client's session with the gateway,
// not the backend's, and is never forwarded.
const reservedMeta = "io.modelcontextprotocol/"

// forwardsMeta reports whether a key of a client request's _meta goes to
// the backend as the client wrote it: not a reserved key, nor the
// progressToken, which the gateway sets itself (the backends package puts
// its own on a call and relays the progress under the client's).
func forwardsMeta(key string) bool {
	return key != "progressToken" && !strings.HasPrefix(key, reservedMeta)
}

// liveRoute is the route of a call by name once its server's live list is
// known. While a server starts, a route comes from its snapshot's list, or
// from the name's prefix alone, and its definition may not be the server's,
// or there is none: a destructive tool would run unconfirmed. So such a
// call waits for the server to be ready, as it would have to anyway, within
// the call's timeout, and is routed again by the live list: to the tool a
// list showed under the name, by whatever name it has now; a name that
// list lacks is not found (docs/trust.md). The tables may still be the
// snapshot's for a moment after the server is ready (they follow it on
// the Changed hook's goroutine), and the name may then route to another
// server still starting: each is waited for in turn; every turn waits for
// a server to become ready, so none spins.
func (f *front) liveRoute(ctx context.Context, name string, r toolRoute) (toolRoute, error) {
	b := f.g.opts.Backends
	if r.kind != backendTool {
		return r, nil
	}
	for !f.liveListed(r) {
		if err := b.AwaitLive(ctx, r.server, r.own, f.upstream()); err != nil {
			return r, err
		}
		f.rebuild(ctx, always)
		live, ok := f.lookupTool(name)
		if r.def != nil && (!ok || live.server != r.server || live.own != r.own) {
			// The name a list showed for a tool names another one now,
			// or none (names go by the set of names, which changed):
			// the client chose the tool it was shown, which is called,
			// if the live list still has it, by its live route.
			live, ok = f.routeOf(r.server, r.own)
		}
		if !ok || live.kind != backendTool {
			return r, f.unknown(kindTool, name)
		}
		r = live
	}
	return r, nil
}

// routeOf finds the route of server's tool own in the current tables, by
// whatever name it has; a tool the policy hides is not there. It looks at
// every route: only a call whose tool changed its name meanwhile needs it.
func (f *front) routeOf(server, own string) (toolRoute, bool) {
	for _, r := range f.tables().tools {
		if r.kind == backendTool && r.server == server && r.own == own {
			return r, f.allowed(r)
		}
	}
	return toolRoute{}, false
}

// liveListed reports whether r, a backend tool's route, is of its server's
// live list: the server is ready, and r is not its snapshot's. Only such a
// route may decide a call (confirmation, scopes, limits).
func (f *front) liveListed(r toolRoute) bool {
	return !r.snapshot && f.g.opts.Backends.Live(r.server)
}

// backendOptions are a backend call's options: the client's _meta goes
// along except its progressToken (the backends package puts its own) and
// reserved keys, and the caller's capabilities (backendCaps); the
// backend's progress comes back through notify under the client's token.
// notify runs in the backend's read loop, before the call's response, so
// no progress follows the response.
func (f *front) backendOptions(tc toolCall, notify func(*mcp.ProgressNotificationParams)) (backends.CallOptions, error) {
	opts := backends.CallOptions{Task: tc.task, Extra: tc.extra, ClientCaps: f.backendCaps(tc.caps), Caller: f.upstream()}
	if a := bytes.TrimSpace(tc.args); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return opts, errInvalidParams("arguments must be a JSON object")
	}
	token := tc.progressToken()
	if tc.meta != nil {
		opts.Meta = metaToForward(tc.meta)
	}
	if token != nil && notify != nil {
		token = bytes.Clone(token)
		opts.Progress = func(p *mcp.ProgressNotificationParams) {
			p.ProgressToken = token
			notify(p)
		}
	}
	return opts, nil
}

// metaToForward is what of a tools/call's _meta goes to the backend
// (forwardsMeta), or nil for nothing.
func metaToForward(meta json.RawMessage) map[string]any {
	var out map[string]any
	_ = wire.EachMember(meta, func(k string, v json.RawMessage) {
		if forwardsMeta(k) {
			if out == nil {
				out = make(map[string]any)
			}
			out[k] = v
		}
	})
	return out
}

// inlineRoute returns the route of a backend tool in the current tables:
// such a call may start without waiting for anything, if its admission
// needs no wait either (callRun.begin: one whose server is starting, whose
// route is still its snapshot's, or that needs confirmation waits).
func (f *front) inlineRoute(name string) (toolRoute, bool) {
	if f.isAnswerTool(name) {
		return toolRoute{}, false
	}
	r, ok := f.lookupTool(name)
	return r, ok && r.kind == backendTool
}

// admit checks a call of server's tool own (called as name) against the
// scopes the tool needs (scopes.go), and takes it from the client's rate
// limit for that tool, if one names it (limits.go).
func (f *front) admit(server, own, name string) error {
	if len(f.g.limits.tools) == 0 && len(f.g.toolScopes) == 0 {
		return nil
	}
	who := f.grant().who
	if e := f.g.checkScopes(who, server, own, name); e != nil {
		return e
	}
	if e := f.g.admitCall(who, server, own, name); e != nil {
		return e
	}
	return nil
}

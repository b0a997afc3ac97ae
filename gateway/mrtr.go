package gateway

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"go.opentelemetry.io/otel/trace"
)

// A backend of the per-request era that needs something of the client
// mid-call answers input_required (inputRequests and a requestState of
// its own). A client of that era gets the answer as it is — under OAuth
// with the backend's requestState sealed for the caller (requeststate.go,
// sealBackendState) — and calls again itself. A client of the handshake era cannot: the gateway asks it each
// input request as the request it was in that era (sampling, elicitation,
// roots, on the call's own stream), and calls the backend again with the
// answers and the backend's requestState, round after round, until the
// backend answers for good (backends.Fulfill). The reverse — a client of
// the per-request era and a backend that sends requests — is hold.go's.

// caller is what a request's context says of the client it serves: the
// request's era, the capabilities a request of the per-request era
// declared (nil otherwise), how to ask a client of the handshake era for
// input (nil otherwise), and how to say which backend serves the request.
type caller struct {
	era  wire.Era
	caps json.RawMessage
	ask  backends.Asker // asks the client of the handshake era a request
	// at records the backend the request goes to, so that the backend's
	// own requests meanwhile find the client's call (clientFor) — held,
	// for a client of the per-request era (hold.go); nil outside a call.
	at func(server string)
}

// callerKey carries a request's caller in its context.
type callerKey struct{}

// withCaller returns ctx carrying the caller of the request it serves.
func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerOf returns the caller ctx carries (the zero caller if none).
func callerOf(ctx context.Context) caller {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c
}

// forward sends a request (prompts/get, resources/read) to a backend for
// the client ctx serves: with the client's _meta as a tools/call passes it
// (forwardedMeta), the client's capabilities (backendCaps; for a client of
// the per-request era, those it declared: the backend's requests meanwhile
// hold the request, hold.go),
// and, for one of the handshake era, the backend's input_required
// answered (backends.Fulfill).
func (f *front) forward(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	params = forwardedMeta(params)
	cl := callerOf(ctx)
	if cl.at != nil {
		cl.at(server)
	}
	b := f.g.opts.Backends
	opts := backends.CallOptions{ClientCaps: f.backendCaps(cl.caps), Caller: f.upstream()}
	var span trace.Span
	if f.g.opts.Tracer != nil {
		span, opts.Meta = f.g.backendSpan(ctx, method, server, "")
	}
	raw, err := b.Request(ctx, server, method, params, opts)
	if span != nil {
		endSpan(span, raw, nil, err)
	}
	if err != nil || cl.era == wire.PerRequestEra || !backends.InputRequired(raw) {
		return raw, err
	}
	return backends.Fulfill(ctx, raw, cl.ask, func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error) {
		again := params
		_ = wire.EachMember(extra, func(name string, v json.RawMessage) { again, _ = wire.SetMember(again, name, v) })
		return b.Request(ctx, server, method, again, backends.CallOptions{ClientCaps: f.backendCaps(nil), Caller: f.upstream()})
	})
}

// forwardedMeta returns params with the client's _meta as a backend is
// given it, as backendOptions does for a tools/call: only the keys
// forwardsMeta passes; without _meta when none is left. Params that are no
// object are returned as they are (checkParams answers them).
func forwardedMeta(params json.RawMessage) json.RawMessage {
	meta := wire.Member(params, "_meta")
	if meta == nil {
		return params
	}
	kept, dropped := json.RawMessage(`{}`), false
	if wire.EachMember(meta, func(k string, v json.RawMessage) {
		if !forwardsMeta(k) {
			dropped = true
			return
		}
		kept, _ = wire.SetMember(kept, k, v)
	}) != nil || !dropped {
		return params
	}
	if string(kept) == "{}" {
		kept = nil // removes the member
	}
	if out, err := wire.SetMember(params, "_meta", kept); err == nil {
		return out
	}
	return params
}

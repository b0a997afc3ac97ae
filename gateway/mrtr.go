package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/trace"
)

// A backend of the stateless era that needs something of the client
// mid-call answers input_required (inputRequests and a requestState of
// its own). A client of that era gets the answer as it is and calls again
// itself. A client of the handshake era cannot: the gateway asks it each
// input request as the request it was in that era (sampling, elicitation,
// roots, on the call's own stream), and calls the backend again with the
// answers and the backend's requestState, round after round, until the
// backend answers for good (fulfill). The reverse — a client of the
// stateless era and a backend that sends requests — is hold.go's.

// maxInputRounds bounds the rounds of one call, as go-sdk's client does.
const maxInputRounds = 10

// inputRequired reports whether a result asks for input.
func inputRequired(result json.RawMessage) bool {
	return bytes.Contains(result, []byte(`"input_required"`)) &&
		string(bytes.TrimSpace(wire.Member(result, "resultType"))) == `"input_required"`
}

// asker asks the client of the handshake era a request and returns its
// answer.
type asker func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// caller is what a request's context says of the client it serves: the
// capabilities a request of the stateless era declared (nil otherwise),
// and how to ask a client of the handshake era for input (nil otherwise).
type caller struct {
	caps json.RawMessage
	ask  asker
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

// fulfill answers a backend's input_required result for a client of the
// handshake era: each input request is asked of the client, and the call
// is made again (retry) with extra holding the answers and the backend's
// requestState, until the backend's result needs no more input. The
// result is valid after the call (retry's results are copies).
func fulfill(ctx context.Context, result json.RawMessage, ask asker, retry func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	for round := 0; inputRequired(result); round++ {
		if round == maxInputRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the server asked for input more than %d times", maxInputRounds)}
		}
		if ask == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server asks the client for input, which this client cannot be asked"}
		}
		responses := json.RawMessage(`{}`)
		var failed error
		err := wire.EachMember(wire.Member(result, "inputRequests"), func(key string, req json.RawMessage) {
			if failed != nil {
				return
			}
			method, ok := wire.Unquote(wire.Member(req, "method"))
			if !ok {
				failed = fmt.Errorf("input request %q names no method", key)
				return
			}
			res, err := ask(ctx, method, wire.Member(req, "params"))
			if err != nil {
				failed = err
				return
			}
			responses, _ = wire.SetMember(responses, key, res)
		})
		if err = cmp.Or(err, failed); err != nil {
			return nil, err
		}
		extra, _ := wire.SetMember(json.RawMessage(`{}`), "inputResponses", responses)
		if st := wire.Member(result, "requestState"); st != nil {
			extra, _ = wire.SetMember(extra, "requestState", st)
		}
		if result, err = retry(ctx, extra); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// forward sends a request (prompts/get, resources/read) to a backend for
// the client ctx serves: with the capabilities a client of the stateless
// era declared, and, for one of the handshake era, the backend's
// input_required answered (fulfill).
func (f *front) forward(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	cl := callerOf(ctx)
	b := f.g.opts.Backends
	opts := backends.CallOptions{ClientCaps: cl.caps}
	var span trace.Span
	if f.g.opts.Tracer != nil {
		span, opts.Meta = f.g.backendSpan(ctx, method, server, "")
	}
	raw, err := b.Request(ctx, server, method, params, opts)
	if span != nil {
		endSpan(span, raw, nil, err)
	}
	if err != nil || cl.caps != nil || !inputRequired(raw) {
		return raw, err
	}
	return fulfill(ctx, raw, cl.ask, func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error) {
		again := params
		_ = wire.EachMember(extra, func(name string, v json.RawMessage) { again, _ = wire.SetMember(again, name, v) })
		return b.Request(ctx, server, method, again, backends.CallOptions{})
	})
}

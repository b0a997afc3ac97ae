package gateway

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated from protocol 2026-07-28 on, but backends speak 2025-11-25 and still use them: the gateway forwards them for as long as clients support them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// handleBackendRequest forwards a backend's server-to-client request
// (sampling, elicitation, roots) to the client whose call the backend is
// serving: a session's call to that backend in flight (clientFor), else
// a held call of that backend waiting for its client's retry (hold.go).
// During a call whose client did not declare the capability, or whose
// caller cannot be asked (REST), it is refused (-32600): it may carry that
// caller's data, which no other client may see. Only a request outside
// any call goes to any client that declared the capability and may see
// the backend. The request and the client's answer pass unchanged
// (outgoing.go). It is the backends.Hooks.Request hook.
func (g *Gateway) handleBackendRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, fmt.Errorf("method %s is not forwarded", method)
	}
	// A request of a caller's own session (upstream_auth) is that
	// person's: only their sessions and held calls may be asked.
	who := backends.RequestCaller(ctx)
	to, during := g.clientFor(server, method, who)
	if during == nil {
		// No call to server that a session serves: the request may be
		// for a held call whose client has not called again yet, or for
		// a caller that cannot be asked; only a request outside any
		// call goes to any client that declared the capability.
		if h := g.holds.waitingOn(server, who); h != nil {
			return h.ask(ctx, method, params)
		}
		if g.callsUnaskable(server) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the caller cannot be asked for " + method + " (a REST call)"}
		}
	}
	if to == nil {
		return nil, fmt.Errorf("no connected client supports %s", method)
	}
	g.log.Debug("forwarding backend request to client", "server", server, "method", method)
	if during != nil && during.era == wire.HandshakeEra && !to.f.supports(method) {
		if to.f.issuer != "" {
			return nil, errOtherReplica(method, to.f.issuer)
		}
		return nil, errClientLacks(method)
	}
	if during != nil && during.era == wire.PerRequestEra {
		// A client of the per-request era is asked by an input_required
		// answer to its call (hold.go).
		return to.ask(ctx, during, server, method, params)
	}
	var id json.RawMessage
	if during != nil {
		id = during.id
	}
	return to.request(ctx, id, method, params)
}

// callingUnaskable records a backend call to server in flight for a
// caller that cannot be asked (front.unaskable); the returned func ends it.
func (g *Gateway) callingUnaskable(server string) (done func()) {
	g.mu.Lock()
	if g.unaskable == nil {
		g.unaskable = make(map[string]int)
	}
	g.unaskable[server]++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		if g.unaskable[server]--; g.unaskable[server] == 0 {
			delete(g.unaskable, server)
		}
		g.mu.Unlock()
	}
}

// callsUnaskable reports whether a call to server for a caller that cannot
// be asked is in flight.
func (g *Gateway) callsUnaskable(server string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.unaskable[server] > 0
}

// errOtherReplica answers a backend's request during a call of a session
// this replica serves a copy of (front.issuer): the client's answer would
// reach whichever replica the balancer picks, and only the issuing one
// waits for it.
func errOtherReplica(method, issuer string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the client cannot be asked for %s by this replica: its session was issued by replica %q, which alone receives its answers (route the session's requests there, docs/deploy.md)", method, issuer)}
}

// supports reports whether the client declared the capability a
// server-to-client method needs, at initialize (a client of the
// per-request era receives no requests: it is asked per call, hold.go).
// The copy of a sealed session on another replica than its issuer's
// (front.issuer) can ask nothing: the answer would not come back to it.
func (f *front) supports(method string) bool {
	d := f.declared()
	ok := f.initialized.Load() && !f.sessionless && f.issuer == "" && wire.EraOf(d.version) == wire.HandshakeEra
	return ok && declares(d.caps, method)
}

// present reports whether a capability is declared: an object, even {}.
func present(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// clientFor picks the client session a backend's request goes to, and
// the call in flight it serves (nil outside any call): a call to that
// backend whose client can be asked — one of the handshake era that
// declared the capability at initialize, or one of the per-request era whose
// call declared it; else a call whose client did not declare it (the
// request is refused: it may carry that call's data, which no other
// client may see); else, outside any call, any session of the handshake
// era that declared it and whose policy lets it see the backend. A
// backend's request carries no reference to the call it serves, so the
// call is found by the backend:
// many clients calling the same backend at once cannot be told apart, and
// the first found gets it. A request of a caller's own session of a server
// reached per caller (who, backends.RequestCaller) goes to that caller's
// sessions only.
func (g *Gateway) clientFor(server, method, who string) (*session, *call) {
	g.mu.Lock()
	sessions := make([]*session, 0, len(g.fronts))
	for f := range g.fronts {
		if f.sess != nil && (who == "" || f.callerIdentity() == who) {
			sessions = append(sessions, f.sess)
		}
	}
	g.mu.Unlock()
	var fallback, lacks *session
	var lacking *call
	for _, s := range sessions {
		old := s.f.supports(method)
		c := s.callTo(server)
		switch {
		case c == nil:
		case old && c.era == wire.HandshakeEra || c.era == wire.PerRequestEra && declares(c.caps, method):
			return s, c
		case lacking == nil:
			lacks, lacking = s, c
		}
		if old && fallback == nil && s.f.seesServer(server) {
			// Outside a call, only a client the policy lets see the
			// server: one it hides is never asked for its roots, its
			// model or its user's input by that server.
			fallback = s
		}
	}
	if lacking != nil {
		// The request serves a call whose client did not declare what
		// it needs: it is refused (handleBackendRequest), never shown to
		// a client whose call it is not — another session's data.
		return lacks, lacking
	}
	return fallback, nil
}

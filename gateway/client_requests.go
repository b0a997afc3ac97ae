package gateway

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated from protocol 2026-07-28 on, but backends speak 2025-11-25 and still use them: the gateway forwards them for as long as clients support them.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HandleBackendRequest forwards a backend's server-to-client request
// (sampling, elicitation, roots) to the client whose call the backend is
// serving: a client that declared the capability and has a call to that
// backend in flight; failing that, any client that declared it. The
// request and the client's answer pass unchanged (outgoing.go). It is the
// backends.Options.OnRequest hook.
func (g *Gateway) HandleBackendRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, fmt.Errorf("method %s is not forwarded", method)
	}
	to, during := g.clientFor(server, method)
	if to == nil {
		return nil, fmt.Errorf("no connected client supports %s", method)
	}
	g.log.Debug("forwarding backend request to client", "server", server, "method", method)
	return to.request(ctx, during, method, params)
}

// clientSupports reports whether the client declared the capability a
// server-to-client method needs.
func clientSupports(ss *mcp.ServerSession, method string) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil {
		return false
	}
	switch method {
	case "sampling/createMessage":
		return p.Capabilities.Sampling != nil
	case "elicitation/create":
		return p.Capabilities.Elicitation != nil
	case "roots/list":
		// The roots capability is a struct, not a pointer: a client that
		// answers roots/list declares it with at least {}; go-sdk keeps
		// RootsV2 for that.
		return p.Capabilities.RootsV2 != nil || p.Capabilities.Roots.ListChanged
	}
	return false
}

// clientFor picks the client session a backend's request goes to, and the
// id of its call the request serves (nil outside any call). A backend's
// request carries no reference to the call it serves, so the call is found
// by the backend: many clients calling the same backend at once cannot be
// told apart, and the first found gets it.
func (g *Gateway) clientFor(server, method string) (*session, json.RawMessage) {
	g.mu.Lock()
	type served struct {
		f *front
		s *session
	}
	fronts := make([]served, 0, len(g.fronts))
	for f := range g.fronts {
		fronts = append(fronts, served{f, f.sess})
	}
	g.mu.Unlock()
	var fallback *session
	for _, x := range fronts {
		ss := x.f.currentSession()
		if ss == nil || x.s == nil || !clientSupports(ss, method) {
			continue
		}
		if id := x.s.callTo(server); id != nil {
			return x.s, id
		}
		if fallback == nil {
			fallback = x.s
		}
	}
	return fallback, nil
}

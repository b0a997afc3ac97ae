package gateway

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated from protocol 2026-07-28 on, but backends speak 2025-11-25 and still use them: the gateway forwards them for as long as clients support them.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HandleBackendRequest forwards a backend's server-to-client request
// (sampling, elicitation, roots) to a connected client that declared the
// capability, unchanged, and returns the client's answer unchanged
// (outgoing.go). It is the backends.Options.OnRequest hook.
func (g *Gateway) HandleBackendRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, fmt.Errorf("method %s is not forwarded", method)
	}
	var to *session
	for _, f := range g.frontList() {
		g.mu.Lock()
		s := f.sess
		g.mu.Unlock()
		if ss := f.currentSession(); ss != nil && s != nil && clientSupports(ss, method) {
			to = s
			break
		}
	}
	if to == nil {
		return nil, fmt.Errorf("no connected client supports %s", method)
	}
	g.log.Debug("forwarding backend request to client", "server", server, "method", method)
	return to.request(ctx, method, params)
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

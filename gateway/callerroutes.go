package gateway

import (
	"context"
	"errors"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// A server reached per caller (upstream_auth, docs/teams.md) lists to each
// caller what that caller's own session lists (backends.ToolsFor), so the
// tool table of a client with a caller is that caller's: the shared one
// (toolRoutes) when no server is reached per caller, or the client has no
// caller; else one kept per (naming, caller), computed again when the
// caller's tools change, as the shared one is.

// maxCallerTables bounds the callers' tables kept: past it they are all
// dropped, and made again by the next list of each (one pass over its
// tools, with the shared table's find_tools index as the seed).
const maxCallerTables = 256

// callerRouteKey is a caller's table's key: its naming and Caller.Subject.
type callerRouteKey struct {
	n       namer
	subject string
}

// toolRoutesFor is toolRoutes for caller up (nil: nobody in particular).
// A gateway without a server reached per caller has one table per naming:
// the shared one, whoever asks.
func (g *Gateway) toolRoutesFor(n namer, up *backends.Caller) *toolTable {
	if up == nil || up.Subject == "" || !g.opts.Backends.PerCaller() {
		return g.toolRoutes(n)
	}
	tools := g.opts.Backends.ToolsFor(up)
	prefixes := g.prefix.Load()
	key := callerRouteKey{n, up.Subject}
	g.routesMu.Lock()
	defer g.routesMu.Unlock()
	old := g.callerRoutes[key]
	if old != nil && old.prefixes == prefixes && sameTools(old.tools, tools) {
		return old
	}
	routes, order := g.buildToolRoutes(n, tools, *prefixes)
	t := &toolTable{tools: tools, prefixes: prefixes, routes: routes, order: order, own: appOwnNames(routes, order)}
	if old == nil {
		old = g.routes[n] // most of a caller's tools are everyone's
	}
	if old != nil {
		if t.seed = old.index.Load(); t.seed == nil {
			t.seed = old.seed
		}
	}
	if _, kept := g.callerRoutes[key]; !kept && len(g.callerRoutes) >= maxCallerTables {
		clear(g.callerRoutes)
	}
	g.callerRoutes[key] = t
	return t
}

// resolveCallers resolves a name with the prefix of a server reached per
// caller that the client's tables lack (resolve; done reports whether it
// did): its caller's own session is made if need be and waited for, and
// its list decides — a tool another person's session lists is not found.
// A caller that can have no session (nobody, or no usable credential)
// gets the route by the prefix alone, whose call fails saying why
// (-32003) before anything is sent.
func (f *front) resolveCallers(ctx context.Context, name string) (r toolRoute, ok, done bool) {
	b := f.g.opts.Backends
	if !b.PerCaller() {
		return r, false, false
	}
	among := make(map[string]bool)
	for server := range f.g.prefixes() {
		if b.PerCallerServer(server) {
			among[server] = true
		}
	}
	server, own, found := f.prefixOwner(name, among)
	if !found || b.Excludes(server, own) {
		return r, false, false
	}
	err := b.AwaitLive(ctx, server, own, f.upstream())
	var ce *backends.CallerError
	var se *backends.SignInError
	if errors.As(err, &ce) || errors.As(err, &se) {
		r = toolRoute{kind: backendTool, server: server, own: own}
		return r, f.allowed(r), true
	}
	if err != nil {
		return r, false, false // the server's own state: resolve goes on
	}
	f.rebuild(ctx, always)
	r, ok = f.lookupTool(name)
	return r, ok, true
}

package gateway

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// Scopes of tools (gateway.http.oauth.tool_scopes, docs/teams.md): a call
// of a tool that names needs them in the caller's token besides those
// every request needs. Over HTTP a request that calls such a tool without
// them is answered 403 insufficient_scope, naming the scopes to ask for,
// before the session reads it: the client can get a token with more scopes
// (step-up) and send it again. Wherever a call is resolved they are checked
// again (a name not in the tables yet when the POST came), and a call
// without them fails with codeInsufficientScope.

// codeInsufficientScope is the JSON-RPC error of a call whose token lacks a
// scope the tool needs.
const codeInsufficientScope = -32030

// toolScope is one entry of tool_scopes.
type toolScope struct {
	match  []policy.Pattern
	scopes []string
}

func newToolScopes(ts []config.ToolScope) []toolScope {
	var out []toolScope
	for _, t := range ts {
		s := toolScope{scopes: t.Scopes}
		for _, p := range t.Tools {
			if pat, err := policy.ParsePattern(p); err == nil {
				s.match = append(s.match, pat)
			}
		}
		out = append(out, s)
	}
	return out
}

// scopesFor is every scope a call of server's tool own needs beyond those
// of every request.
func (g *Gateway) scopesFor(server, own string) []string {
	var need []string
	for _, t := range g.toolScopes {
		if slices.ContainsFunc(t.match, func(p policy.Pattern) bool { return p.Matches(policy.Tool, server, own) }) {
			for _, s := range t.scopes {
				if !slices.Contains(need, s) {
					need = append(need, s)
				}
			}
		}
	}
	return need
}

// scopeError is a call whose token lacks scopes the tool needs.
type scopeError struct {
	name    string
	missing []string
}

func (e *scopeError) Error() string {
	return "Insufficient scope: calling " + e.name + " needs the scope " + strings.Join(e.missing, " ")
}

// checkScopes is nil when p may call server's tool own (called as name)
// by the scopes of its token.
func (g *Gateway) checkScopes(p *authn.Principal, server, own, name string) *scopeError {
	if len(g.toolScopes) == 0 || p == nil {
		return nil
	}
	if missing := p.HasScopes(g.scopesFor(server, own)); len(missing) > 0 {
		return &scopeError{name: name, missing: missing}
	}
	return nil
}

// scopesOK checks the tools a POST's messages call (by either naming form,
// and through lazy mode's call tools) against its token's scopes; it
// answers 403 insufficient_scope, naming every scope the request needs,
// and reports false when one is missing.
func (g *Gateway) scopesOK(w http.ResponseWriter, r *http.Request, msgs []inMsg) bool {
	p := PrincipalOf(r.Context())
	if len(g.toolScopes) == 0 || p == nil {
		return true
	}
	var need []string
	up := upstreamCaller(p) // a tool of a server reached per caller is routed by the caller's own list
	for i := range msgs {
		m := &msgs[i]
		if m.Method != "tools/call" {
			continue
		}
		for _, n := range g.calledNames(m.name, m.param("arguments")) {
			server, own, ok := g.routeOf(n, up)
			if !ok {
				continue
			}
			for _, s := range g.scopesFor(server, own) {
				if !slices.Contains(need, s) {
					need = append(need, s)
				}
			}
		}
	}
	missing := p.HasScopes(need)
	if len(missing) == 0 {
		return true
	}
	oauth := g.opts.Config.Gateway.HTTP.OAuth
	all := slices.Clone(oauth.Scopes)
	for _, s := range need {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	e := &authn.Error{Code: "insufficient_scope", Description: "the tool needs the scope " + strings.Join(missing, " ")}
	w.Header().Set("WWW-Authenticate", authn.Challenge(oauth.Resource, e, all))
	refuseHTTP(w, http.StatusForbidden, "Forbidden: "+e.Description)
	return false
}

// calledNames are the tools a tools/call of name reaches: name itself,
// and for lazy mode's call tools the tool they call.
func (g *Gateway) calledNames(name string, args []byte) []string {
	for _, n := range g.namers() {
		if name == n.name("gateway", metaCall) || name == n.name("gateway", metaCallRead) {
			inner, _ := wire.Unquote(wire.Member(args, "name"))
			return []string{name, inner}
		}
	}
	return []string{name}
}

// routeOf finds the server and own name of a tool by the name a client
// calls it, in any naming: the gateway's own tools are the gateway's.
func (g *Gateway) routeOf(name string, up *backends.Caller) (server, own string, ok bool) {
	r, found := g.routeByName(name, up)
	if !found || r.kind == metaTool {
		return "", "", false
	}
	s, o := routePolicy(r)
	return s, o, true
}

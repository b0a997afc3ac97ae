package gateway

import (
	"context"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/authn"
	"github.com/mcp-gateway/mcp-gateway/internal/policy"
)

// The per-identity policy (docs/teams.md). The HTTP front authenticates a
// request and puts its principal in the request's context (WithPrincipal);
// the front serving it asks the policy once what that principal may see
// (authn.Principal.Decision) and applies the decision wherever a name is
// resolved or listed: the tool tables (lookupTool, orphan), the prompt and
// resource tables (built without what it hides), lazy mode's find_tools,
// and the REST API, which resolves through a front too. A name the policy
// hides is not found, by any spelling, exactly as a name nothing has; the
// refusal is reported to Options.OnDeny.

type principalKey struct{}

// WithPrincipal returns ctx carrying who the request comes from: sessions
// started with it, and Gateway.Call, apply the policy to it.
func WithPrincipal(ctx context.Context, p *authn.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalOf is the principal ctx carries, or nil.
func PrincipalOf(ctx context.Context) *authn.Principal {
	p, _ := ctx.Value(principalKey{}).(*authn.Principal)
	return p
}

// Denial is a request the policy refused: the client was told the name is
// not found.
type Denial struct {
	Time     time.Time
	Identity string // the principal's key
	Client   string // the client's clientInfo.name
	Kind     string // "tool", "prompt" or "resource"
	Name     string // the name (or URI) the client gave
	Server   string // the backend that has it
	Own      string // its own name there
	// Rule and Pattern are the deny that refused it, "" when no rule
	// allowed it.
	Rule, Pattern string
}

// setPrincipal records who the front's client is and what the policy lets
// it see. A front of no principal (stdio, the command line) sees
// everything.
func (f *front) setPrincipal(p *authn.Principal) {
	var d *policy.Decision
	if p != nil {
		d = p.Decision(f.g.opts.Policy)
	}
	f.mu.Lock()
	f.who, f.access, f.identity = p, d, identity(p)
	f.mu.Unlock()
}

// samePrincipal reports whether p is the front's principal: the session of
// one caller is not another's (an HTTP request of another principal gets
// 404 for it). When p is the same caller with another token whose claims
// give another decision, the front takes the new one and its tables are
// built again.
func (f *front) samePrincipal(p *authn.Principal) bool {
	f.mu.Lock()
	who, access := f.who, f.access
	f.mu.Unlock()
	switch {
	case who == p:
		return true
	case !who.Same(p):
		return false
	}
	d := p.Decision(f.g.opts.Policy)
	f.mu.Lock()
	f.who, f.access, f.identity = p, d, identity(p)
	synced := f.synced
	f.mu.Unlock()
	if !d.Same(access) && synced {
		f.sync()
	}
	return true
}

// routeKind is what a route names for the policy: a backend tool by its
// server and own name, an answer tool as the gateway's.
func routePolicy(r toolRoute) (server, own string) {
	if r.kind == answerTool {
		return policy.Gateway, r.own
	}
	return r.server, r.own
}

// allowedLocked reports whether the policy lets the client see a tool
// route; lazy mode's meta tools are always there (they reach only what the
// policy allows). f.mu is held.
func (f *front) allowedLocked(r toolRoute) bool {
	if f.access == nil || r.kind == metaTool {
		return true
	}
	server, own := routePolicy(r)
	return f.access.Allows(policy.Tool, server, own)
}

// allowsResources reports whether the client may see server's resources.
func (f *front) allowsResources(server string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.access == nil || f.access.Allows(policy.Resource, server, "")
}

// hidden reports whether the policy hides a tool name: one the tables (or
// a backend that is down) have, which the client may not see. It is told
// to OnDeny, once per refused request.
func (f *front) hidden(kind policy.Kind, name string) bool {
	f.mu.Lock()
	access := f.access
	var server, own string
	found := false
	switch kind {
	case policy.Tool:
		if r, ok := f.tools[name]; ok {
			server, own = routePolicy(r)
			found = true
		} else if r, ok := f.known[name]; ok {
			server, own, found = r.server, r.own, true
		}
	case policy.Prompt:
		if r, ok := f.deniedPrompts[name]; ok {
			server, own, found = r.server, r.own, true
		}
	case policy.Resource:
		if s, ok := f.deniedRes[resourceKey{name, false}]; ok {
			server, found = s, true
		} else if s, ok := f.deniedRes[resourceKey{name, true}]; ok {
			server, found = s, true
		}
	}
	f.mu.Unlock()
	if access == nil || !found {
		return false
	}
	if e := access.Explain(kind, server, own); !e.Allowed {
		f.deny(kind, name, server, own, e)
		return true
	}
	return false
}

// deny reports a refused request to Options.OnDeny.
func (f *front) deny(kind policy.Kind, name, server, own string, e policy.Explanation) {
	on := f.g.opts.OnDeny
	if on == nil {
		return
	}
	f.mu.Lock()
	d := Denial{Time: time.Now(), Client: f.client, Kind: [...]string{"tool", "prompt", "resource"}[kind],
		Name: name, Server: server, Own: own, Rule: e.Rule, Pattern: e.Pattern}
	if f.who != nil {
		d.Identity = f.who.Key
	}
	f.mu.Unlock()
	on(d)
}

// policyKind is what the policy calls a kind of name (kindTool, ...).
func policyKind(kind string) policy.Kind {
	return map[string]policy.Kind{kindTool: policy.Tool, kindPrompt: policy.Prompt, kindResource: policy.Resource}[kind]
}

// allows reports whether the policy lets the client see server's kind
// named own.
func (f *front) allows(kind policy.Kind, server, own string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.access.Allows(kind, server, own)
}

package gateway

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"

	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
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
//
// A profile (gateway.profiles) is the same filter for every caller of a
// front: the stdio front, `tools` and `call` serve gateway.profile, and
// an HTTP request the profile of its path (withProfile). It bounds the
// caller's decision (policy.Decision.Within, in Gateway.access), so that
// the one decision a front holds is applied in all those places, and a
// tool outside the profile is not found by any name either.

type principalKey struct{}

type profileKey struct{}

// withProfile returns ctx carrying the profile a request is served under
// (the HTTP paths /p/NAME/...): sessions started with it, the REST API and
// Gateway.Call see that profile's tools only. Without it they serve
// gateway.profile.
func withProfile(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, profileKey{}, name)
}

// hasProfile reports whether gateway.profiles has one named name.
func (g *Gateway) hasProfile(name string) bool {
	_, ok := g.profiles[name]
	return ok
}

// profileOf is the profile a request of ctx is served under.
func (g *Gateway) profileOf(ctx context.Context) string {
	if p, ok := ctx.Value(profileKey{}).(string); ok {
		return p
	}
	return g.opts.Config.Gateway.Profile
}

// newProfiles compiles gateway.profiles. Their patterns were checked when
// the configuration loaded; one that still fails leaves its profile
// showing nothing rather than everything.
func newProfiles(cfg []config.ToolProfile, log *slog.Logger) map[string]*policy.Decision {
	out := make(map[string]*policy.Decision, len(cfg))
	for _, p := range cfg {
		d, err := policy.NewProfile(p.Name, p.Include, p.Exclude)
		if err != nil {
			log.Error("profile shows nothing", "profile", p.Name, "err", err)
			d, _ = policy.NewProfile(p.Name, nil, []string{"*"})
		}
		out[p.Name] = d
	}
	return out
}

// access is what a caller may see: the policy's decision for its
// principal (nil: everything), within the profile it is served under.
// Every front and the REST API take it from here.
func (g *Gateway) access(p *authn.Principal, profile string) *policy.Decision {
	var d *policy.Decision
	if p != nil {
		d = p.Decision(g.opts.Policy)
	}
	return d.Within(g.profiles[profile])
}

// SeesServer reports whether the caller of ctx may see anything of server
// under the policy: the process's own pages (/status, /metrics) show a
// caller only the servers its lists would.
func (g *Gateway) SeesServer(ctx context.Context, server string) bool {
	p := PrincipalOf(ctx)
	if p == nil {
		return true // no principal: no policy applies (stdio, auth: none without one)
	}
	return p.Decision(g.opts.Policy).AllowsServer(server)
}

// callerContext is parent carrying who a request of ctx comes from: its
// principal and, if it has its own, its profile.
func callerContext(parent, ctx context.Context) context.Context {
	parent = WithPrincipal(parent, PrincipalOf(ctx))
	if p, ok := ctx.Value(profileKey{}).(string); ok {
		parent = withProfile(parent, p)
	}
	return parent
}

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
	// Profile is the profile that leaves it out (gateway.profiles), ""
	// when the policy refused it: Pattern is then the profile's exclude
	// that names it, or "" when no include does.
	Profile string
}

// setCaller records who the front's client is (the principal of ctx) and
// the profile it is served under, and what it may see (Gateway.access). A
// front of no principal (stdio, the command line) sees everything of its
// profile.
func (f *front) setCaller(ctx context.Context) {
	p, profile := PrincipalOf(ctx), f.g.profileOf(ctx)
	f.gr.Store(&grant{who: p, access: f.g.access(p, profile), identity: identity(p), profile: profile, up: upstreamCaller(p)})
}

// callerIdentity is the key of the front's principal ("" when anonymous):
// what the gateway seals for the caller is bound to it (a held call's
// requestState, a task id).
func (f *front) callerIdentity() string { return f.grant().identity }

// stateOwner is the key the gateway seals a backend's own requestState
// for (requeststate.go): the principal's, when the gateway tells callers
// apart by it (OAuth). A single caller — no principal, auth none, the
// shared token, whose holders are one caller — has "": a backend's state
// passes through untouched, as the backend gave it.
func (f *front) stateOwner() string {
	c := f.grant()
	if c.who == nil || c.who.Auth == "token" {
		return ""
	}
	return c.identity
}

// serves reports whether the front serves a request of ctx: its principal
// and its profile. The session of one caller is not another's, nor is a
// session of one profile reached on another's path (such a request gets
// 404 for it). When the principal is the same caller with another token
// whose claims give another decision, the front takes the new one and its
// tables are built again.
func (f *front) serves(ctx context.Context) bool {
	p := PrincipalOf(ctx)
	c := f.grant()
	who, access, profile := c.who, c.access, c.profile
	switch {
	case f.g.profileOf(ctx) != profile:
		return false
	case who == p:
		return true
	case !who.Same(p):
		return false
	}
	d := f.g.access(p, profile)
	f.gr.Store(&grant{who: p, access: d, identity: identity(p), profile: profile, up: upstreamCaller(p)})
	if !d.Same(access) {
		f.rebuild(ctx, ifBuilt)
	}
	return true
}

// routePolicy is what a route names for the policy: a backend tool by its
// server and own name, an answer tool as the gateway's.
func routePolicy(r toolRoute) (server, own string) {
	if r.kind == answerTool {
		return policy.Gateway, r.own
	}
	return r.server, r.own
}

// allowed reports whether the policy (and the profile) lets the client
// see a tool route (allowed, of the front's current caller).
func (f *front) allowed(r toolRoute) bool {
	return allowed(f.declared(), f.grant(), r, f.g.lazy())
}

// allowed reports whether the policy (and the profile) lets caller c, who
// declared d, see a tool route. The meta tools are there in lazy mode and
// for a client with a cap on its tools in auto (they reach only what the
// policy allows).
func allowed(d *declared, c *grant, r toolRoute, lazy bool) bool {
	if r.kind == metaTool {
		return lazy || d.maxTools > 0
	}
	if c.access == nil {
		return true
	}
	server, own := routePolicy(r)
	return c.access.Allows(policy.Tool, server, own)
}

// seesServer reports whether the policy lets the client see anything of
// server: a server it hides reaches the client by no route, neither a
// request outside a call (clientFor) nor a notification (BackendLog and
// backendNotification ask the decision too).
func (f *front) seesServer(server string) bool {
	return f.grant().access.AllowsServer(server)
}

// allowsResources reports whether the client may see server's resources.
func (f *front) allowsResources(server string) bool {
	access := f.grant().access
	return access == nil || access.Allows(policy.Resource, server, "")
}

// hidden reports whether the policy hides a tool name: one the tables (or
// a backend that is down) have, which the client may not see. It is told
// to OnDeny, once per refused request.
func (f *front) hidden(kind policy.Kind, name string) bool {
	access, t := f.grant().access, f.tables()
	var server, own string
	found := false
	switch kind {
	case policy.Tool:
		if r, ok := t.tools[name]; ok {
			server, own = routePolicy(r)
			found = r.kind != metaTool // one the client does not get is no tool of the policy's
		} else if r, ok := t.known[name]; ok {
			server, own, found = r.server, r.own, true
		}
	case policy.Prompt:
		if r, ok := t.deniedPrompts[name]; ok {
			server, own, found = r.server, r.own, true
		}
	case policy.Resource:
		if s, ok := t.deniedRes[resourceKey{name, false}]; ok {
			server, found = s, true
		} else if s, ok := t.deniedRes[resourceKey{name, true}]; ok {
			server, found = s, true
		}
	}
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
	d := Denial{Time: time.Now(), Client: f.declared().client, Kind: [...]string{"tool", "prompt", "resource"}[kind],
		Name: name, Server: server, Own: own, Rule: e.Rule, Pattern: e.Pattern, Profile: e.Profile}
	if who := f.grant().who; who != nil {
		d.Identity = who.Key
	}
	on(d)
}

// policyKind is what the policy calls a kind of name (kindTool, ...).
func policyKind(kind string) policy.Kind {
	switch kind {
	case kindTool:
		return policy.Tool
	case kindPrompt:
		return policy.Prompt
	case kindResource:
		return policy.Resource
	}
	var none policy.Kind
	return none
}

// allows reports whether the policy lets the client see server's kind
// named own.
func (f *front) allows(kind policy.Kind, server, own string) bool {
	return f.grant().access.Allows(kind, server, own)
}

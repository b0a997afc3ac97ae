package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// The settings of a gateway shared by a team (docs/teams.md): how HTTP
// clients authenticate, the per-identity policy and the rate limits.

// maxRate bounds per_minute and burst.
const maxRate = 1_000_000

// AuthMode is how HTTP clients authenticate: "none", "token" or "oauth".
func (h *HTTP) AuthMode() string {
	switch {
	case h.Auth != "":
		return h.Auth
	case h.AuthTokenEnv != "":
		return "token"
	}
	return "none"
}

// validateTeams checks gateway.http.auth and oauth, gateway.policy and
// gateway.rate_limits.
func (l *loader) validateTeams() {
	h := &l.cfg.Gateway.HTTP
	switch h.Auth {
	case "", "none", "token", "oauth":
	default:
		l.errAt("gateway.http.auth", "must be none, token or oauth, not %q", truncate(h.Auth, 40))
	}
	if h.Auth == "token" && h.AuthTokenEnv == "" {
		l.errAt("gateway.http.auth", "token needs gateway.http.auth_token_env, the variable that holds the token")
	}
	if (h.Auth == "none" || h.Auth == "oauth") && h.AuthTokenEnv != "" {
		l.errAt("gateway.http.auth_token_env", "is only used with gateway.http.auth: token (auth is %s)", h.Auth)
	}
	o := &h.OAuth
	if h.Auth == "oauth" {
		l.validateOAuth(o)
	} else {
		for i, set := range []bool{o.Resource != "", len(o.Issuers) > 0, len(o.Scopes) > 0, len(o.ToolScopes) > 0} {
			if set {
				k := []string{"resource", "issuers", "scopes", "tool_scopes"}[i]
				l.errAt("gateway.http.oauth."+k, "is only used with gateway.http.auth: oauth")
			}
		}
	}

	if a := l.cfg.Gateway.Policy.Admin; a != "" {
		if err := policy.CheckExpr(a); err != nil {
			l.errAt("gateway.policy.admin", "%v", err)
		}
	}
	for i, r := range l.cfg.Gateway.Policy.Rules {
		key := fmt.Sprintf("gateway.policy.rules[%d]", i)
		if err := policy.CheckExpr(r.When); err != nil {
			l.errAt(key+".when", "%v", err)
		}
		l.patterns(key+".allow", r.Allow)
		l.patterns(key+".deny", r.Deny)
		if len(r.Allow) == 0 && len(r.Deny) == 0 {
			l.errAt(key, "allows and denies nothing: give allow or deny patterns")
		}
	}

	l.gatewayServerName()

	rl := l.cfg.Gateway.RateLimits
	l.rate("gateway.rate_limits.identity", rl.Identity)
	for i, t := range rl.Tools {
		key := fmt.Sprintf("gateway.rate_limits.tools[%d]", i)
		if len(t.Tools) == 0 {
			l.errAt(key, "needs tools: the SERVER.TOOL patterns the limit applies to")
		}
		l.patterns(key+".tools", t.Tools)
		if t.PerMinute == 0 {
			l.errAt(key, "needs per_minute: the calls a minute each identity may make of each tool")
		}
		l.rate(key, t.Rate)
	}
}

// gatewayServerName refuses a server named gateway where patterns are read
// and the answer tools are on: patterns name those tools gateway.NAME
// (policy.Gateway), so "gateway" or "gateway.answer*" would name that
// server's tools and the answer tools alike — a rule allowing the server
// would allow the answer tools, and a deny of the answer tools would deny
// its tools. Its prefix may stay gateway: patterns name servers, not
// prefixes.
func (l *loader) gatewayServerName() {
	g := &l.cfg.Gateway
	if !g.AnswerTools || len(g.Policy.Rules) == 0 && len(g.RateLimits.Tools) == 0 &&
		len(g.HTTP.OAuth.ToolScopes) == 0 && len(g.Profiles) == 0 {
		return
	}
	for _, s := range l.cfg.Servers {
		if s.Name == policy.Gateway {
			l.errs = append(l.errs, &Error{Key: "servers", Msg: fmt.Sprintf("a server named %q (%s) is what policy, profile, rate limit and tool scope patterns call the gateway's own answer tools (%s.answer*): rename it (prefix: %s keeps the names clients see), or set gateway.answer_tools: false",
				s.Name, s.Source, policy.Gateway, policy.Gateway)})
			return
		}
	}
}

func (l *loader) validateOAuth(o *ResourceServer) {
	if o.Resource == "" {
		l.errAt("gateway.http.auth", "oauth needs gateway.http.oauth.resource: the URL clients reach /mcp at, such as https://gateway.example.com/mcp")
	} else if msg := checkResourceURL(o.Resource); msg != "" {
		l.errAt("gateway.http.oauth.resource", "%s", msg)
	}
	if len(o.Issuers) == 0 {
		l.errAt("gateway.http.auth", "oauth needs gateway.http.oauth.issuers: at least one authorization server whose tokens are accepted")
	}
	seen := map[string]bool{}
	for i, is := range o.Issuers {
		key := fmt.Sprintf("gateway.http.oauth.issuers[%d]", i)
		switch {
		case is.Issuer == "":
			l.errAt(key, "needs issuer: the issuer identifier its tokens' iss claim names")
		case checkResourceURL(is.Issuer) != "":
			l.errAt(key+".issuer", "%s", checkResourceURL(is.Issuer))
		case seen[is.Issuer]:
			l.errAt(key+".issuer", "%s is listed twice", is.Issuer)
		}
		seen[is.Issuer] = true
		if is.JWKSURL != "" {
			if msg := checkResourceURL(is.JWKSURL); msg != "" {
				l.errAt(key+".jwks_url", "%s", msg)
			}
		}
		for j, a := range is.Audiences {
			if strings.TrimSpace(a) == "" {
				l.errAt(key+".audiences", "item %d is empty", j)
			}
		}
		if is.IntrospectionURL != "" {
			if msg := checkResourceURL(is.IntrospectionURL); msg != "" {
				l.errAt(key+".introspection_url", "%s", msg)
			}
			if is.ClientID == "" {
				l.errAt(key+".introspection_url", "needs client_id: the client the gateway introspects tokens as")
			}
		}
		if is.ClientSecretEnv != "" && !isEnvName(is.ClientSecretEnv) {
			l.errAt(key+".client_secret_env", "must be an environment variable name, not %q", truncate(is.ClientSecretEnv, 40))
		}
		if is.IntrospectionURL == "" {
			for _, v := range [2][2]string{{"client_id", is.ClientID}, {"client_secret_env", is.ClientSecretEnv}} {
				if v[1] != "" {
					l.errAt(key+"."+v[0], "is only used with introspection_url (to introspect opaque tokens)")
				}
			}
		}
	}
	l.scopes("gateway.http.oauth.scopes", o.Scopes)
	for i, ts := range o.ToolScopes {
		key := fmt.Sprintf("gateway.http.oauth.tool_scopes[%d]", i)
		if len(ts.Tools) == 0 {
			l.errAt(key, "needs tools: the SERVER.TOOL patterns that need the scopes")
		}
		l.patterns(key+".tools", ts.Tools)
		if len(ts.Scopes) == 0 {
			l.errAt(key, "needs scopes: the scopes a call of these tools needs")
		}
		l.scopes(key+".scopes", ts.Scopes)
	}
}

// checkResourceURL returns "" when s is an https URL, or an http one on a
// loopback host (a gateway or issuer on the same machine), without a
// fragment; otherwise what is wrong.
func checkResourceURL(s string) string {
	if msg := checkHTTPURL(s); msg != "" {
		return msg
	}
	u, _ := url.Parse(s)
	switch {
	case u.Scheme == "http" && !IsLoopbackHost(u.Hostname()):
		return "must be an https URL (http only on a loopback host)"
	case u.Fragment != "":
		return "must have no fragment"
	}
	return ""
}

// scopes checks a list of OAuth scopes: RFC 6749's scope tokens.
func (l *loader) scopes(key string, scopes []string) {
	for i, s := range scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			l.errAt(key, "item %d (%q) is not a scope: printable ASCII without spaces, quotes or backslashes", i, truncate(s, 40))
		}
	}
}

// patterns checks policy patterns (SERVER or SERVER.NAME).
func (l *loader) patterns(key string, pats []string) {
	for i, s := range pats {
		if _, err := policy.ParsePattern(s); err != nil {
			l.errAt(key, "item %d: %v", i, err)
		}
	}
}

func (l *loader) rate(key string, r Rate) {
	if r.PerMinute < 0 || r.PerMinute > maxRate {
		l.errAt(key+".per_minute", "must be between 0 and %d, got %d", maxRate, r.PerMinute)
	}
	if r.Burst < 0 || r.Burst > maxRate {
		l.errAt(key+".burst", "must be between 0 and %d, got %d", maxRate, r.Burst)
	}
	if r.Burst > 0 && r.PerMinute == 0 {
		l.errAt(key+".burst", "needs per_minute (a bucket that never refills)")
	}
}

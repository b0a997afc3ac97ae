package config

import (
	"cmp"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// upstreamAuth checks server s's upstream_auth block (at path p, the
// entry at line) and expands its values: a mode the gateway knows, on a
// remote server, with the keys that mode needs and none it ignores.
func (l *loader) upstreamAuth(s *Server, p string, line int) {
	a := &s.UpstreamAuth
	o, given := l.origin[join(p, "upstream_auth")]
	if !given {
		return
	}
	key := func(k string) (int, string) {
		if ko, ok := l.origin[join(p, "upstream_auth."+k)]; ok {
			return ko.line, ko.key
		}
		return o.line, o.key
	}
	errKey := func(k, format string, args ...any) {
		ln, kk := key(k)
		l.errLine(ln, kk, format, args...)
	}
	if s.Command != "" {
		l.errLine(o.line, o.key, "is for a remote server (url): a local server (command) serves whoever runs the gateway, not each caller")
		return
	}
	l.upstream = append(l.upstream, o)
	x := func(k, v string) string {
		ln, kk := key(k)
		return l.expand(s.Name, "upstream_auth."+k, kk, v, ln, &s.secrets, false)
	}
	a.TokenURL, a.Audience, a.Resource, a.ClientID = x("token_url", a.TokenURL), x("audience", a.Audience), x("resource", a.Resource), x("client_id", a.ClientID)
	if a.ClientKeyFile != "" {
		a.ClientKeyFile = ResolvePath(l.dir, ExpandHome(x("client_key_file", a.ClientKeyFile), l.home))
	}

	// set names the keys given, for "is not used with mode" errors.
	set := map[string]bool{
		"token_url": a.TokenURL != "", "audience": a.Audience != "", "resource": a.Resource != "",
		"scopes": len(a.Scopes) > 0, "client_id": a.ClientID != "", "client_secret_env": a.ClientSecretEnv != "",
		"client_key_file": a.ClientKeyFile != "", "client_key_id": a.ClientKeyID != "", "subject_token_type": a.SubjectTokenType != "",
	}
	only := func(mode string, allowed ...string) {
		for _, k := range []string{"token_url", "audience", "resource", "scopes", "client_id", "client_secret_env", "client_key_file", "client_key_id", "subject_token_type"} {
			if set[k] && !slices.Contains(allowed, k) {
				errKey(k, "is not used with mode %s", mode)
			}
		}
	}
	switch a.Mode {
	case UpstreamTokenExchange, UpstreamJWTBearer:
		only(a.Mode, "token_url", "audience", "resource", "scopes", "client_id", "client_secret_env", "client_key_file", "client_key_id", "subject_token_type")
		switch {
		case a.TokenURL == "":
			errKey("token_url", "%s needs token_url: the authorization server's token endpoint", a.Mode)
		case checkResourceURL(a.TokenURL) != "":
			errKey("token_url", "%s", checkResourceURL(a.TokenURL))
		}
		if a.ClientID == "" {
			errKey("client_id", "%s needs client_id: the client the gateway exchanges tokens as", a.Mode)
		}
		if a.ClientSecretEnv != "" && !isEnvName(a.ClientSecretEnv) {
			errKey("client_secret_env", "must be an environment variable name, not %q", truncate(a.ClientSecretEnv, 40))
		}
		if a.ClientSecretEnv != "" && a.ClientKeyFile != "" {
			errKey("client_key_file", "and client_secret_env both given; the client authenticates with one")
		}
		if a.ClientKeyID != "" && a.ClientKeyFile == "" {
			errKey("client_key_id", "is the id of client_key_file's key; give client_key_file")
		}
		if a.Resource != "" {
			if u, err := url.Parse(a.Resource); err != nil || !u.IsAbs() || u.Fragment != "" {
				errKey("resource", "must be an absolute URI without a fragment (RFC 8707)")
			}
		}
		l.scopes(cmp.Or(l.origin[join(p, "upstream_auth.scopes")].key, join(p, "upstream_auth.scopes")), a.Scopes)
		switch a.SubjectTokenType {
		case "", "access_token", "id_token":
		default:
			errKey("subject_token_type", "must be access_token or id_token, not %q", truncate(a.SubjectTokenType, 40))
		}
	case UpstreamPassthrough:
		only(a.Mode, "audience")
	case UpstreamPerUserLogin:
		// The sign-in is the server's own OAuth client (its oauth keys),
		// run once per person.
		only(a.Mode)
	case "":
		errKey("mode", "needs mode: token_exchange, jwt_bearer, passthrough or per_user_login")
	default:
		errKey("mode", "must be token_exchange, jwt_bearer, passthrough or per_user_login, not %q", truncate(a.Mode, 40))
	}
	// The shared credentials are not sent to a server reached per caller:
	// say so rather than drop them silently.
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if strings.EqualFold(k, "Authorization") {
			ho := l.origin[join(p, "headers."+k)]
			l.errLine(cmp.Or(ho.line, line), cmp.Or(ho.key, join(p, "headers."+k)), "is a shared credential, and a server with upstream_auth is reached with each caller's own; remove it")
		}
	}
	if a.Mode != UpstreamPerUserLogin && !reflect.ValueOf(s.OAuth).IsZero() {
		oo := l.origin[join(p, "oauth")]
		l.errLine(cmp.Or(oo.line, line), cmp.Or(oo.key, join(p, "oauth")), "is the shared sign-in, which a server with upstream_auth mode %s does not use; remove it", a.Mode)
	}
}

// upstreamCallers warns of servers with upstream_auth on a gateway whose
// HTTP callers are not people (gateway.http.auth not oauth): no request
// has a caller's credential, so every one to them is refused.
func (l *loader) upstreamCallers() {
	if l.cfg.Gateway.HTTP.AuthMode() == "oauth" {
		return
	}
	for _, o := range l.upstream {
		l.warn(o.line, o.key, "needs callers authenticated by OAuth (gateway.http.auth: oauth): without them every request to this server is refused")
	}
}

// UpstreamAudience is the audience a caller's token must name to be
// passed through to server s: upstream_auth.audience, else the server's
// URL (its resource identifier, RFC 8707/9728).
func (s Server) UpstreamAudience() string {
	return cmp.Or(s.UpstreamAuth.Audience, s.URL)
}

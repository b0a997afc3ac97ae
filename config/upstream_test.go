package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUpstreamAuthParsed(t *testing.T) {
	c, _ := mustLoad(t, `servers:
  - name: x
    url: https://x.example/mcp
    upstream_auth:
      mode: token_exchange
      token_url: https://idp.example/token
      audience: x-api
      resource: https://x.example/mcp
      scopes: [read, write]
      client_id: gateway
      client_key_file: keys/gw.pem
      client_key_id: k1
      subject_token_type: id_token
  - name: p
    url: https://p.example/mcp
    upstream_auth: {mode: passthrough}
  - name: u
    url: https://u.example/mcp
    oauth: {client_id: gw}
    upstream_auth: {mode: per_user_login}
  - name: j
    url: https://j.example/mcp
    upstream_auth: {mode: jwt_bearer, token_url: "https://idp.example/token", client_id: gw, client_secret_env: GW_SECRET}
`, nil, Flags{})
	x := c.Servers[0].UpstreamAuth
	want := UpstreamAuth{Mode: "token_exchange", TokenURL: "https://idp.example/token", Audience: "x-api", Resource: "https://x.example/mcp",
		Scopes: []string{"read", "write"}, ClientID: "gateway", ClientKeyID: "k1", SubjectTokenType: "id_token"}
	if filepath.Base(x.ClientKeyFile) != "gw.pem" || !filepath.IsAbs(x.ClientKeyFile) {
		t.Errorf("client_key_file = %q, want the file's path made absolute", x.ClientKeyFile)
	}
	x.ClientKeyFile = ""
	if x.Mode != want.Mode || x.TokenURL != want.TokenURL || x.Audience != want.Audience || x.Resource != want.Resource ||
		!slices.Equal(x.Scopes, want.Scopes) || x.ClientID != want.ClientID || x.ClientKeyID != want.ClientKeyID || x.SubjectTokenType != want.SubjectTokenType {
		t.Errorf("upstream_auth = %+v, want %+v", x, want)
	}
	if got := c.Servers[1]; got.UpstreamAuth.Mode != UpstreamPassthrough || got.UpstreamAudience() != "https://p.example/mcp" {
		t.Errorf("passthrough: %+v, audience %q (want the URL)", got.UpstreamAuth, got.UpstreamAudience())
	}
	if got := c.Servers[2]; got.UpstreamAuth.Mode != UpstreamPerUserLogin || got.OAuth.ClientID != "gw" {
		t.Errorf("per_user_login: %+v %+v", got.UpstreamAuth, got.OAuth)
	}
	if got := c.Servers[3].UpstreamAuth; got.Mode != UpstreamJWTBearer || got.ClientSecretEnv != "GW_SECRET" {
		t.Errorf("jwt_bearer: %+v", got)
	}
}

// A server reached per caller on a gateway whose callers are not people
// is said to be unreachable.
func TestUpstreamAuthWithoutOAuthWarns(t *testing.T) {
	entry := "servers:\n  - name: x\n    url: https://x.example\n    upstream_auth: {mode: passthrough}\n"
	_, s := mustLoad(t, entry, nil, Flags{})
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], ":4: servers[0].upstream_auth: needs callers authenticated by OAuth") {
		t.Errorf("warnings %q", s.Warnings)
	}
	_, s = mustLoad(t, entry+"gateway: {http: {auth: oauth, oauth: {resource: 'https://gw.example/mcp', issuers: [{issuer: 'https://idp.example'}]}}}\n", nil, Flags{})
	if len(s.Warnings) != 0 {
		t.Errorf("with OAuth: warnings %q", s.Warnings)
	}
}

func TestUpstreamAuthRefused(t *testing.T) {
	for _, tc := range []struct{ name, entry, want string }{
		{"stdio", "command: srv\n    upstream_auth: {mode: passthrough}", ":4: servers[0].upstream_auth: is for a remote server (url)"},
		{"no mode", "url: https://x.example\n    upstream_auth: {audience: a}", ":4: servers[0].upstream_auth: needs mode: token_exchange"},
		{"bad mode", "url: https://x.example\n    upstream_auth: {mode: magic}", `:4: servers[0].upstream_auth.mode: must be token_exchange, jwt_bearer, passthrough or per_user_login, not "magic"`},
		{"no token_url", "url: https://x.example\n    upstream_auth: {mode: token_exchange, client_id: gw}", ":4: servers[0].upstream_auth: token_exchange needs token_url"},
		{"http token_url", "url: https://x.example\n    upstream_auth: {mode: token_exchange, client_id: gw, token_url: 'http://idp.example/t'}", "servers[0].upstream_auth.token_url: must be an https URL"},
		{"no client", "url: https://x.example\n    upstream_auth: {mode: jwt_bearer, token_url: 'https://idp.example/t'}", ":4: servers[0].upstream_auth: jwt_bearer needs client_id"},
		{"secret and key", "url: https://x.example\n    upstream_auth: {mode: token_exchange, client_id: gw, token_url: 'https://i.example/t', client_secret_env: S, client_key_file: k.pem}", "client_key_file: and client_secret_env both given"},
		{"passthrough keys", "url: https://x.example\n    upstream_auth: {mode: passthrough, token_url: 'https://i.example/t'}", "servers[0].upstream_auth.token_url: is not used with mode passthrough"},
		{"token type", "url: https://x.example\n    upstream_auth: {mode: token_exchange, client_id: gw, token_url: 'https://i.example/t', subject_token_type: saml}", `subject_token_type: must be access_token or id_token, not "saml"`},
		{"shared header", "url: https://x.example\n    headers: {Authorization: 'Bearer t'}\n    upstream_auth: {mode: passthrough}", ":4: servers[0].headers.Authorization: is a shared credential"},
		{"shared oauth", "url: https://x.example\n    oauth: {client_id: gw}\n    upstream_auth: {mode: passthrough}", ":4: servers[0].oauth: is the shared sign-in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := loadText(t, "servers:\n  - name: x\n    "+tc.entry+"\n", nil, Flags{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

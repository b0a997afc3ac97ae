package gateway

import (
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// upstreamCaller is the caller a server with upstream_auth is reached for
// (docs/teams.md, "Each person's own credentials upstream"): an OAuth
// principal's subject and token. Every other principal — the shared
// token, anonymous, none on stdio and the command line — is nobody's in
// particular: nil, which such a server refuses.
func upstreamCaller(p *authn.Principal) *backends.Caller {
	if p == nil || p.Auth != "oauth" || p.Bearer() == "" {
		return nil
	}
	return &backends.Caller{Subject: p.Key, Token: p.Bearer(), Claims: p.Claims, Expires: p.Expires}
}

// upstream is the caller of the front's requests to backends
// (backends.CallOptions.Caller).
func (f *front) upstream() *backends.Caller { return f.grant().up }

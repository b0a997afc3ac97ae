package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// clientFile keeps, per server, the gateway's client at the upstream's
// authorization server and what discovery found, so that a restart
// neither discovers nor registers again.
const clientFile = "client.json"

// upstream is a per_user_login server's authorization server as the gateway
// signs its callers in to it: one client for all of them, whose redirect
// URI is the gateway's callback.
type upstream struct {
	URL        string           `json:"url"`      // the server's
	Redirect   string           `json:"redirect"` // the callback the client was registered with
	Issuer     string           `json:"issuer"`
	Resource   string           `json:"resource"` // RFC 8707, the server's resource identifier
	Revocation string           `json:"revocation_url,omitempty"`
	ClientID   string           `json:"client_id"`
	Secret     string           `json:"client_secret,omitempty"`
	AuthURL    string           `json:"auth_url"`
	TokenURL   string           `json:"token_url"`
	AuthStyle  oauth2.AuthStyle `json:"auth_style"`
	Scopes     []string         `json:"scopes,omitempty"`
}

func (up *upstream) config(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: up.ClientID, ClientSecret: up.Secret, RedirectURL: redirect, Scopes: up.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: up.AuthURL, TokenURL: up.TokenURL, AuthStyle: up.AuthStyle}}
}

// upstream returns s's authorization server and the gateway's client there:
// from memory, else from the server's client file, else found (RFC 9728,
// RFC 8414) and registered (the configured client, else RFC 7591) now.
// Discoveries are serialised: they are rare, and two would register twice.
func (u *Users) upstream(ctx context.Context, s config.Server) (*upstream, error) {
	u.mu.Lock()
	up := u.servers[s.Name]
	u.mu.Unlock()
	if up != nil && up.URL == s.URL && up.Redirect == u.redirect {
		return up, nil
	}
	u.discoverMu.Lock()
	defer u.discoverMu.Unlock()
	p := filepath.Join(u.dir, s.Name, clientFile)
	if b, err := os.ReadFile(p); err == nil {
		var stored upstream
		if json.Unmarshal(b, &stored) == nil && stored.URL == s.URL && stored.Redirect == u.redirect && stored.ClientID != "" &&
			(s.OAuth.ClientID == "" || s.OAuth.ClientID == stored.ClientID) {
			up = &stored
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if up == nil {
		var err error
		if up, err = u.discover(ctx, s); err != nil {
			return nil, fmt.Errorf("find %s's authorization server: %w", s.Name, err)
		}
		b, _ := json.MarshalIndent(up, "", "  ")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(p, append(b, '\n'), 0o600); err != nil {
			return nil, err
		}
	}
	u.mu.Lock()
	u.servers[s.Name] = up
	u.mu.Unlock()
	return up, nil
}

// discover finds s's authorization server and registers the gateway there.
func (u *Users) discover(ctx context.Context, s config.Server) (*upstream, error) {
	metaURL, challengeScope := u.challenge(ctx, s.URL)
	var prm *oauthex.ProtectedResourceMetadata
	var errs []error
	for _, c := range prmURLs(metaURL, s.URL) {
		m, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, u.hc)
		if err == nil && m != nil && len(m.AuthorizationServers) > 0 {
			prm = m
			break
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if prm == nil {
		return nil, fmt.Errorf("no protected resource metadata names an authorization server: %w", errors.Join(errs...))
	}
	issuer := prm.AuthorizationServers[0]
	var asm *oauthex.AuthServerMeta
	for _, mu := range asMetadataURLs(issuer) {
		m, err := oauthex.GetAuthServerMeta(ctx, mu, issuer, u.hc)
		if err == nil && m != nil {
			asm = m
			break
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if asm == nil {
		return nil, fmt.Errorf("no metadata for the authorization server %s: %w", issuer, errors.Join(errs...))
	}
	up := &upstream{URL: s.URL, Redirect: u.redirect, Issuer: asm.Issuer, Resource: prm.Resource, Revocation: asm.RevocationEndpoint,
		AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint}
	switch {
	case len(s.OAuth.Scopes) > 0:
		up.Scopes = s.OAuth.Scopes
	case challengeScope != "":
		up.Scopes = strings.Fields(challengeScope)
	default:
		up.Scopes = prm.ScopesSupported
	}
	if id := s.OAuth.ClientID; id != "" {
		up.ClientID, up.Secret = id, s.OAuth.ClientSecret
		return up, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, errors.New("the authorization server takes no registrations: configure oauth.client_id (registered with the redirect URI " + u.redirect + ")")
	}
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{u.redirect}, ClientName: "mcp-gateway",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
	}, u.hc)
	if err != nil {
		return nil, fmt.Errorf("register the gateway: %w", err)
	}
	up.ClientID, up.Secret = reg.ClientID, reg.ClientSecret
	switch reg.TokenEndpointAuthMethod {
	case "client_secret_post", "none":
		up.AuthStyle = oauth2.AuthStyleInParams
	case "client_secret_basic":
		up.AuthStyle = oauth2.AuthStyleInHeader
	}
	return up, nil
}

// challenge asks the server without a token and returns the
// resource_metadata and scope of its 401's Bearer challenge, if any.
func (u *Users) challenge(ctx context.Context, server string) (metaURL, scope string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return "", ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := u.hc.Do(req)
	if err != nil {
		return "", ""
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return "", ""
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", ""
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") {
			return c.Params["resource_metadata"], c.Params["scope"]
		}
	}
	return "", ""
}

type prmURL struct{ url, resource string }

// prmURLs are where the protected resource metadata may be (MCP's
// authorization spec): the challenge's, then the well-known path with the
// server's path, then at the root.
func prmURLs(metaURL, resource string) []prmURL {
	var out []prmURL
	if metaURL != "" {
		out = append(out, prmURL{metaURL, resource})
	}
	ru, err := url.Parse(resource)
	if err != nil {
		return out
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	out = append(out, prmURL{mu.String(), resource})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	return append(out, prmURL{mu.String(), root.String()})
}

// asMetadataURLs are where an issuer's metadata may be (RFC 8414, OpenID
// discovery; with path insertion and appending for an issuer with a path).
func asMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	p := strings.Trim(u.Path, "/")
	at := func(path string) string {
		c := *u
		c.Path = path
		return c.String()
	}
	if p == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{at("/.well-known/oauth-authorization-server/" + p), at("/.well-known/openid-configuration/" + p),
		at("/" + p + "/.well-known/openid-configuration")}
}

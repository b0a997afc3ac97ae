package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// introspects reports whether any issuer checks opaque tokens.
func (v *Verifier) introspects() bool {
	for _, is := range v.opts.Issuers {
		if is.IntrospectionURL != "" {
			return true
		}
	}
	return false
}

// introspect checks an opaque token by RFC 7662 introspection at each
// issuer that has an introspection_url, in order: the first that says it
// is active (for this resource) vouches for it.
func (v *Verifier) introspect(ctx context.Context, token string, now time.Time) (*Principal, error) {
	var failed error
	for i := range v.opts.Issuers {
		is := &v.opts.Issuers[i]
		if is.IntrospectionURL == "" {
			continue
		}
		claims, err := introspectAt(ctx, v.opts.HTTPClient, is, token)
		if err != nil {
			v.log.Warn("oauth: token introspection failed", "issuer", is.Issuer, "err", err)
			failed = err
			continue
		}
		if active, _ := claims["active"].(bool); !active {
			continue
		}
		if iss, ok := claims["iss"].(string); ok && iss != is.Issuer {
			return nil, invalid("the introspected token's issuer %q is not %s", wire.Truncate(iss, 100, "..."), is.Issuer)
		}
		// aud is optional in an introspection answer: an issuer that says
		// a token is active to the gateway's client vouches that it is for
		// the gateway. One that names an audience must name the resource
		// (or the gateway's client).
		var aud []string
		switch a := claims["aud"].(type) {
		case string:
			aud = []string{a}
		case []any:
			for _, x := range a {
				if s, ok := x.(string); ok {
					aud = append(aud, s)
				}
			}
		}
		if len(aud) > 0 && !v.audienceOK(is, aud) && !slices.Contains(aud, is.ClientID) {
			return nil, invalid("the token is not for this resource: its audience %q does not name %s", wire.Truncate(strings.Join(aud, " "), 200, "..."), v.opts.Resource)
		}
		var exp time.Time
		if e, ok := claims["exp"].(float64); ok {
			exp = time.Unix(int64(e), 0)
			if now.After(exp.Add(Leeway)) {
				return nil, invalid("the token expired at %s", exp.UTC().Format(time.RFC3339))
			}
		}
		return principal(is, claims, exp)
	}
	if failed != nil {
		return nil, &Error{Code: "invalid_token", Description: "the token could not be introspected", Unavailable: true}
	}
	return nil, invalid("the token is not active")
}

// introspectAt asks one issuer about a token, authenticating as its client
// (HTTP Basic, RFC 6749 2.3.1), and returns the response's members.
func introspectAt(ctx context.Context, client *http.Client, is *Issuer, token string) (map[string]any, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, is.IntrospectionURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(is.ClientID), url.QueryEscape(is.ClientSecret))
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %s", is.IntrospectionURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocSize+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxDocSize {
		return nil, fmt.Errorf("POST %s: the answer is larger than %d bytes", is.IntrospectionURL, maxDocSize)
	}
	var claims map[string]any
	if err := json.Unmarshal(body, &claims); err != nil {
		return nil, fmt.Errorf("POST %s: %w", is.IntrospectionURL, err)
	}
	return claims, nil
}

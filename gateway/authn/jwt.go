package authn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// signatureAlgorithms are the algorithms a token may be signed with:
// asymmetric ones only, so that nothing the gateway knows can sign a token.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// looksLikeJWT reports whether a token is a compact JWS whose header is a
// JSON object: three base64url parts.
func looksLikeJWT(token string) bool {
	head, rest, ok := strings.Cut(token, ".")
	if !ok || strings.Count(rest, ".") != 1 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	return err == nil && json.Valid(b) && len(b) > 0 && b[0] == '{'
}

// verifyJWT checks a JWT access token: signed by a key of its issuer, iss
// one of the issuers, aud naming the resource, exp not passed and nbf
// reached (with Leeway), and a subject.
func (v *Verifier) verifyJWT(ctx context.Context, token string, now time.Time) (*Principal, error) {
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		return nil, invalid("the token is not a JWT signed with an asymmetric algorithm: %v", err)
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, invalid("the token's claims do not decode: %v", err)
	}
	ks, ok := v.issuers[unverified.Issuer]
	if !ok {
		return nil, invalid("the token's issuer %q is not one the gateway accepts", wire.Truncate(unverified.Issuer, 100, "..."))
	}
	kid := tok.Headers[0].KeyID
	keys, err := ks.keys(ctx, kid, now)
	if err != nil {
		return nil, err
	}
	var (
		std    jwt.Claims
		claims map[string]any
		last   error
	)
	verified := false
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != tok.Headers[0].Algorithm {
			continue
		}
		if last = tok.Claims(k.Key, &std, &claims); last == nil {
			verified = true
			break
		}
	}
	if !verified {
		if last == nil {
			return nil, invalid("no signing key of %s has the token's key id %q", ks.issuer.Issuer, wire.Truncate(kid, 60, "..."))
		}
		return nil, invalid("the token's signature does not verify")
	}
	// Checked again on the verified claims, which are the ones that count.
	if std.Issuer != ks.issuer.Issuer {
		return nil, invalid("the token's issuer %q is not one the gateway accepts", wire.Truncate(std.Issuer, 100, "..."))
	}
	if !v.audienceOK(ks.issuer, std.Audience) {
		return nil, invalid("the token is not for this resource: its audience %q does not name %s", wire.Truncate(strings.Join(std.Audience, " "), 200, "..."), v.opts.Resource)
	}
	if std.Expiry == nil {
		return nil, invalid("the token has no expiry (exp)")
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: now}, Leeway); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return nil, invalid("the token expired at %s", std.Expiry.Time().UTC().Format(time.RFC3339))
		case errors.Is(err, jwt.ErrNotValidYet):
			return nil, invalid("the token is not valid before %s", std.NotBefore.Time().UTC().Format(time.RFC3339))
		}
		return nil, invalid("%v", err)
	}
	return principal(ks.issuer, claims, std.Expiry.Time())
}

// How an issuer's keys are kept: refetched after keysTTL, and at once when
// a token names a key id the set lacks (the issuer rotated its keys), but
// not more often than minRefetch — counting fetches that failed, and also
// while no keys are known — so that tokens with made-up key ids cannot
// make the gateway hammer the issuer. One fetch at a time, bounded by
// fetchTimeout.
const (
	keysTTL      = time.Hour
	minRefetch   = 10 * time.Second
	fetchTimeout = 10 * time.Second
	maxDocSize   = 1 << 20
)

// keySource is one issuer's signing keys (its JWKS), fetched when first
// needed and kept.
type keySource struct {
	issuer *Issuer
	client *http.Client
	log    *slog.Logger

	mu      sync.Mutex
	jwksURL string              // the configured one, or the metadata's
	set     *jose.JSONWebKeySet // replaced, never changed: read outside mu
	fetched time.Time           // when set was fetched
	tried   time.Time           // when the last fetch began, whether it worked or not
	// fetching is closed when the fetch in flight ends; nil while none is.
	fetching chan struct{}
}

// keys returns the keys that may have signed a token with key id kid (all
// of them for a token without one).
func (k *keySource) keys(ctx context.Context, kid string, now time.Time) ([]jose.JSONWebKey, error) {
	set, err := k.current(ctx, kid, now)
	if err != nil {
		return nil, err
	}
	if set == nil {
		return nil, &Error{Code: "invalid_token", Description: "the issuer's signing keys could not be fetched", Unavailable: true}
	}
	if kid == "" {
		return set.Keys, nil
	}
	return set.Key(kid), nil
}

// current returns the key set to check a token with key id kid against.
// The key lock is never held across a fetch: a caller whose key is known
// uses the set at hand even while a refetch is under way; one that lacks
// it waits for the fetch in flight, or starts one when the throttle
// allows, or takes the set as it is.
func (k *keySource) current(ctx context.Context, kid string, now time.Time) (*jose.JSONWebKeySet, error) {
	k.mu.Lock()
	set, inflight := k.set, k.fetching
	known := set != nil && (kid == "" || len(set.Key(kid)) > 0)
	due := !known || now.Sub(k.fetched) > keysTTL
	switch {
	case due && inflight == nil && now.Sub(k.tried) >= minRefetch:
		k.tried = now
		done := make(chan struct{})
		k.fetching = done
		jwksURL := k.jwksURL
		k.mu.Unlock()
		return k.refetch(ctx, jwksURL, now, done), nil
	case !known && inflight != nil:
		k.mu.Unlock()
		select {
		case <-inflight:
		case <-ctx.Done():
			return nil, &Error{Code: "invalid_token", Description: "the request ended while the issuer's signing keys were being fetched", Unavailable: true}
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.set, nil
	}
	k.mu.Unlock()
	return set, nil
}

// refetch fetches the key set for everyone, keeps it if the fetch worked,
// ends the flight (closes done) and returns the set now current. The
// fetch does not end with the request that happened to start it: others
// may be waiting for it.
func (k *keySource) refetch(ctx context.Context, jwksURL string, now time.Time, done chan struct{}) *jose.JSONWebKeySet {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	set, jwksURL, err := k.fetch(ctx, jwksURL)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetching = nil
	close(done)
	switch {
	case err == nil:
		k.set, k.fetched, k.jwksURL = set, now, jwksURL
	case k.set == nil:
		k.log.Warn("oauth: the issuer's signing keys could not be fetched", "issuer", k.issuer.Issuer, "err", err)
	default:
		k.log.Warn("oauth: the issuer's signing keys could not be refreshed; the ones fetched before are used", "issuer", k.issuer.Issuer, "err", err)
	}
	return k.set
}

// fetch gets the issuer's key set from jwksURL, or after its metadata when
// jwksURL is "" and none was configured; it returns the URL it used.
func (k *keySource) fetch(ctx context.Context, jwksURL string) (*jose.JSONWebKeySet, string, error) {
	if jwksURL == "" {
		jwksURL = k.issuer.JWKSURL
	}
	if jwksURL == "" {
		var err error
		if jwksURL, err = discoverJWKS(ctx, k.client, k.issuer.Issuer); err != nil {
			return nil, "", err
		}
	}
	var set jose.JSONWebKeySet
	if err := getJSON(ctx, k.client, jwksURL, &set); err != nil {
		return nil, "", err
	}
	var public []jose.JSONWebKey
	for _, key := range set.Keys {
		if key.Valid() && key.IsPublic() && (key.Use == "" || key.Use == "sig") {
			public = append(public, key)
		}
	}
	if len(public) == 0 {
		return nil, "", fmt.Errorf("%s holds no public signing key", jwksURL)
	}
	set.Keys = public
	return &set, jwksURL, nil
}

// discoverJWKS finds an issuer's jwks_uri in its metadata: OpenID Connect
// discovery (ISSUER/.well-known/openid-configuration), else RFC 8414's
// (/.well-known/oauth-authorization-server inserted before the issuer's
// path). The metadata must name the issuer exactly.
func discoverJWKS(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	oidc := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	rfc8414 := u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.Path, "/")
	var errs []error
	for _, doc := range []string{oidc, rfc8414} {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, client, doc, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case md.Issuer != issuer:
			errs = append(errs, fmt.Errorf("%s names the issuer %q, not %q", doc, wire.Truncate(md.Issuer, 100, "..."), issuer))
		case md.JWKSURI == "":
			errs = append(errs, fmt.Errorf("%s has no jwks_uri", doc))
		default:
			return md.JWKSURI, nil
		}
	}
	return "", errors.Join(errs...)
}

// getJSON GETs a JSON document of at most maxDocSize bytes.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocSize+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocSize {
		return fmt.Errorf("GET %s: larger than %d bytes", u, maxDocSize)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// Package upstream gets a remote server's credential for one caller from
// the caller's own token (docs/teams.md, "Each person's own credentials
// upstream"): RFC 8693 token exchange and the RFC 7523 JWT bearer grant at
// an authorization server's token endpoint, with the gateway's client
// authenticated by a secret or a private-key JWT; and the audience check
// that lets a caller's token through to the server it is meant for.
package upstream

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The grant and token type URIs (RFC 8693 section 3, RFC 7523 section 2.1).
const (
	GrantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	GrantJWTBearer      = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	TypeAccessToken     = "urn:ietf:params:oauth:token-type:access_token"
	TypeIDToken         = "urn:ietf:params:oauth:token-type:id_token"
	clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// maxBody bounds a token endpoint's answer.
const maxBody = 1 << 20

// maxExpiresIn is the longest expires_in a time.Duration holds, in seconds.
const maxExpiresIn = float64(math.MaxInt64 / int64(time.Second))

// Exchanger gets a token for the server from a caller's token at the
// token endpoint: RFC 8693 (Grant GrantTokenExchange) or RFC 7523 (Grant
// GrantJWTBearer, the caller's token as the assertion).
type Exchanger struct {
	Grant    string
	TokenURL string
	Audience string
	Resource string
	Scopes   []string
	ClientID string
	// Secret authenticates the client (client_secret_basic); Key, when
	// set instead, signs a private_key_jwt assertion (RFC 7523 section
	// 2.2) with KeyID in its header. Neither: a public client.
	Secret string
	Key    crypto.Signer
	KeyID  string
	// SubjectType is the RFC 8693 type of the caller's token
	// (TypeAccessToken or TypeIDToken).
	SubjectType string
	HTTP        *http.Client
	Now         func() time.Time
}

// Error is a token endpoint's refusal (RFC 6749 section 5.2).
type Error struct {
	Status      int
	Code        string // invalid_grant, invalid_client, ...
	Description string
}

func (e *Error) Error() string {
	msg := "the token endpoint refused the exchange (HTTP " + fmt.Sprint(e.Status)
	if e.Code != "" {
		msg += ", " + e.Code
	}
	msg += ")"
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// Exchange exchanges subject, the caller's token, and returns the issued
// token and when it expires (zero when the endpoint did not say).
func (x *Exchanger) Exchange(ctx context.Context, subject string) (string, time.Time, error) {
	now := time.Now
	if x.Now != nil {
		now = x.Now
	}
	form := url.Values{"grant_type": {x.Grant}}
	switch x.Grant {
	case GrantTokenExchange:
		form.Set("subject_token", subject)
		form.Set("subject_token_type", x.SubjectType)
		form.Set("requested_token_type", TypeAccessToken)
	case GrantJWTBearer:
		form.Set("assertion", subject)
	default:
		return "", time.Time{}, fmt.Errorf("unknown grant %q", x.Grant)
	}
	if x.Audience != "" {
		form.Set("audience", x.Audience)
	}
	if x.Resource != "" {
		form.Set("resource", x.Resource)
	}
	if len(x.Scopes) > 0 {
		form.Set("scope", strings.Join(x.Scopes, " "))
	}
	req, err := x.request(ctx, form, now())
	if err != nil {
		return "", time.Time{}, err
	}
	start := now()
	resp, err := x.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the configuration's
		}
		return "", time.Time{}, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token endpoint: %w", err)
	}
	var tr struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.RawMessage `json:"expires_in"` // a number; some endpoints quote it
		Error       string          `json:"error"`
		Description string          `json:"error_description"`
		Issued      json.RawMessage `json:"issued_token_type"`
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode}
		if jsonErr == nil {
			e.Code, e.Description = tr.Error, truncate(hide(tr.Description, subject), 200)
		}
		return "", time.Time{}, e
	}
	switch {
	case jsonErr != nil:
		return "", time.Time{}, fmt.Errorf("token endpoint: the answer (%s) is not a token response: %w", ct, jsonErr)
	case tr.AccessToken == "":
		return "", time.Time{}, errors.New("token endpoint: the answer has no access_token")
	case tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") && !strings.EqualFold(tr.TokenType, "N_A"):
		return "", time.Time{}, fmt.Errorf("token endpoint: issued a %q token, not a bearer token", truncate(tr.TokenType, 40))
	}
	var exp time.Time
	if len(tr.ExpiresIn) > 0 && string(tr.ExpiresIn) != "null" {
		secs, err := strconv.ParseFloat(strings.Trim(string(tr.ExpiresIn), `"`), 64)
		// NaN, infinite or beyond a time.Duration: converted, it would
		// give an expiry that depends on the CPU.
		if err != nil || !(secs >= 0 && secs <= maxExpiresIn) {
			return "", time.Time{}, fmt.Errorf("token endpoint: expires_in %q is not a number of seconds", truncate(string(tr.ExpiresIn), 40))
		}
		// Counted from the request: the token was issued after it left.
		exp = start.Add(time.Duration(secs * float64(time.Second)))
	}
	return tr.AccessToken, exp, nil
}

// request is the POST of form to the token endpoint, the client
// authenticated.
func (x *Exchanger) request(ctx context.Context, form url.Values, now time.Time) (*http.Request, error) {
	switch {
	case x.Key != nil:
		a, err := x.assertion(now)
		if err != nil {
			return nil, fmt.Errorf("client assertion: %w", err)
		}
		form.Set("client_id", x.ClientID)
		form.Set("client_assertion_type", clientAssertionType)
		form.Set("client_assertion", a)
	case x.Secret == "":
		form.Set("client_id", x.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if x.Key == nil && x.Secret != "" {
		// RFC 6749 section 2.3.1: both form-encoded, then Basic.
		req.SetBasicAuth(url.QueryEscape(x.ClientID), url.QueryEscape(x.Secret))
	}
	return req, nil
}

// assertion is a private_key_jwt client assertion: the client is issuer
// and subject, the token endpoint the audience, for one minute.
func (x *Exchanger) assertion(now time.Time) (string, error) {
	alg, err := algorithm(x.Key)
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if x.KeyID != "" {
		opts = opts.WithHeader("kid", x.KeyID)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: x.Key}, opts)
	if err != nil {
		return "", err
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	claims := jwt.Claims{
		Issuer: x.ClientID, Subject: x.ClientID, Audience: jwt.Audience{x.TokenURL}, ID: hex.EncodeToString(jti[:]),
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Minute)),
	}
	return jwt.Signed(sig).Claims(claims).Serialize()
}

// algorithm is the JWS algorithm of a key: RS256, or ES256/384/512 by
// the curve.
func algorithm(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jose.ES256, nil
		case 384:
			return jose.ES384, nil
		case 521:
			return jose.ES512, nil
		}
	}
	return "", fmt.Errorf("a %T key cannot sign a client assertion (RSA or EC P-256/384/521)", k)
}

// ReadKey reads a PEM private key (PKCS #8, PKCS #1 RSA or SEC 1 EC) from
// file.
func ReadKey(file string) (crypto.Signer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", file)
	}
	var key any
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a %T key cannot sign", file, key)
	}
	if _, err := algorithm(s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// AudienceOK reports whether a token's aud claim (a string or a list of
// them, as JSON decodes it) names want. A token without aud names
// nothing: it is not passed through (RFC 8707's resource, RFC 9068's
// aud, are what make a token one server's).
func AudienceOK(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return sameAudience(a, want)
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && sameAudience(s, want) {
				return true
			}
		}
	case []string:
		for _, s := range a {
			if sameAudience(s, want) {
				return true
			}
		}
	}
	return false
}

// sameAudience compares audiences exactly, but for a trailing slash of a
// URL, which resource identifiers are written with and without.
func sameAudience(a, b string) bool {
	return a != "" && (a == b || strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") && strings.Contains(a, "://"))
}

// hide replaces the caller's token in s, a token endpoint's text, which
// may echo what it was sent: the token never reaches an error (the
// client's answer, the logs). A "token" of a few characters is left
// alone; replacing it would garble the text and hide nothing.
func hide(s, token string) string {
	if len(token) < 8 {
		return s
	}
	return strings.ReplaceAll(s, token, "[the caller's token]")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

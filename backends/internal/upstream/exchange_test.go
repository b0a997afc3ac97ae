package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// endpoint answers every POST with status and body, recording the form
// and the Authorization header.
func endpoint(t *testing.T, status int, body string) (*httptest.Server, *url.Values, *string) {
	var form url.Values
	var auth string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		form, auth = r.PostForm, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s, &form, &auth
}

func TestExchangeForm(t *testing.T) {
	s, form, auth := endpoint(t, 200, `{"access_token":"new","token_type":"Bearer","expires_in":120,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`)
	now := time.Unix(1_000_000, 0)
	x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, Audience: "api", Resource: "https://api.example/mcp", Scopes: []string{"a", "b"},
		ClientID: "gw id", Secret: "s&cret", SubjectType: TypeIDToken, HTTP: s.Client(), Now: func() time.Time { return now }}
	tok, exp, err := x.Exchange(context.Background(), "the-id-token")
	if err != nil || tok != "new" || !exp.Equal(now.Add(2*time.Minute)) {
		t.Fatalf("Exchange = %q %v %v", tok, exp, err)
	}
	want := url.Values{"grant_type": {GrantTokenExchange}, "subject_token": {"the-id-token"}, "subject_token_type": {TypeIDToken},
		"requested_token_type": {TypeAccessToken}, "audience": {"api"}, "resource": {"https://api.example/mcp"}, "scope": {"a b"}}
	if form.Encode() != want.Encode() {
		t.Errorf("form %s, want %s", form.Encode(), want.Encode())
	}
	// RFC 6749 2.3.1: form-encoded, then Basic.
	req, _ := http.NewRequest("POST", "/", nil)
	req.SetBasicAuth("gw+id", "s%26cret")
	if *auth != req.Header.Get("Authorization") {
		t.Errorf("Authorization %q, want %q", *auth, req.Header.Get("Authorization"))
	}

	x.Grant, x.Secret = GrantJWTBearer, ""
	if _, _, err := x.Exchange(context.Background(), "assertion-jwt"); err != nil {
		t.Fatal(err)
	}
	if form.Get("grant_type") != GrantJWTBearer || form.Get("assertion") != "assertion-jwt" || form.Get("subject_token") != "" || form.Get("client_id") != "gw id" || *auth != "" {
		t.Errorf("jwt-bearer form %s (Authorization %q): a public client names itself in the form", form.Encode(), *auth)
	}
}

// expires_in as some endpoints write it, quoted.
func TestExchangeQuotedExpiresIn(t *testing.T) {
	s, _, _ := endpoint(t, 200, `{"access_token":"x","token_type":"bearer","expires_in":"3600"}`)
	now := time.Unix(1_000_000, 0)
	x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client(), Now: func() time.Time { return now }}
	if _, exp, err := x.Exchange(context.Background(), "t"); err != nil || !exp.Equal(now.Add(time.Hour)) {
		t.Errorf("Exchange: %v %v", exp, err)
	}
}

func TestExchangeRefusals(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, want string
	}{
		{400, `{"error":"invalid_grant","error_description":"subject_token expired"}`, "the token endpoint refused the exchange (HTTP 400, invalid_grant): subject_token expired"},
		{401, `not json`, "the token endpoint refused the exchange (HTTP 401)"},
		{200, `{"token_type":"Bearer"}`, "no access_token"},
		{200, `{"access_token":"x","token_type":"DPoP"}`, `issued a "DPoP" token, not a bearer token`},
		{200, `{"access_token":"x","expires_in":"soon"}`, `expires_in "\"soon\"" is not a number of seconds`},
		{200, `{"access_token":"x","expires_in":-1}`, `expires_in "-1" is not a number of seconds`},
		{200, `<html>`, "is not a token response"},
	} {
		s, _, _ := endpoint(t, tc.status, tc.body)
		x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client()}
		_, _, err := x.Exchange(context.Background(), "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %s: %v, want %q", tc.status, tc.body, err, tc.want)
		}
		var e *Error
		if tc.status != 200 && !errors.As(err, &e) {
			t.Errorf("%d: %T, want *Error", tc.status, err)
		}
	}
}

func TestReadKey(t *testing.T) {
	dir := t.TempDir()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ek)
	p8, _ := x509.MarshalPKCS8PrivateKey(ek)
	for name, block := range map[string]*pem.Block{
		"rsa.pem": {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)},
		"ec.pem":  {Type: "EC PRIVATE KEY", Bytes: ecDER},
		"p8.pem":  {Type: "PRIVATE KEY", Bytes: p8},
	} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := ReadKey(f)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		x := &Exchanger{ClientID: "gw", TokenURL: "https://idp.example/token", Key: k}
		if _, err := x.assertion(time.Now()); err != nil {
			t.Errorf("%s: assertion: %v", name, err)
		}
	}
	// testutil's files (and, under Wine, its removal of them: wine.go).
	bad := testutil.TempFile(t, "bad.pem", "not pem")
	if _, err := ReadKey(bad); err == nil || !strings.Contains(err.Error(), "no PEM block") {
		t.Errorf("ReadKey(not PEM) = %v", err)
	}
}

func TestAudienceOK(t *testing.T) {
	for _, tc := range []struct {
		aud  any
		want string
		ok   bool
	}{
		{"urn:far", "urn:far", true},
		{[]any{"urn:gw", "urn:far"}, "urn:far", true},
		{[]string{"https://far.example/mcp/"}, "https://far.example/mcp", true},
		{"https://far.example/mcp", "https://far.example/mcp/", true},
		{"urn:far/", "urn:far", false},
		{"urn:gw", "urn:far", false},
		{nil, "urn:far", false},
		{"", "", false},
		{[]any{1, "urn:gw"}, "urn:far", false},
		{"https://far.example/mcp/other", "https://far.example/mcp", false},
	} {
		if got := AudienceOK(tc.aud, tc.want); got != tc.ok {
			t.Errorf("AudienceOK(%v, %q) = %v, want %v", tc.aud, tc.want, got, tc.ok)
		}
	}
}

package testop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// TestTokensVerify signs in at the real OP and checks its tokens with the
// gateway's verifier: JWTs for the resource asked for, with scopes and
// groups; opaque tokens by introspection; an expired one refused.
func TestTokensVerify(t *testing.T) {
	o, err := Start(User{ID: "u1", Username: "alice", Password: "pw", Groups: []string{"team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	const resource = "http://127.0.0.1:9/mcp"
	v := authn.New(authn.Options{Resource: resource, Issuers: []authn.Issuer{{Issuer: o.Issuer,
		IntrospectionURL: o.Issuer + "oauth/introspect", ClientID: GatewayClientID, ClientSecret: GatewaySecret}}})
	ctx := context.Background()

	tok, err := o.Token(ctx, ClientID, "alice", "pw", resource, "openid", "mcp", "mcp:write")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(ctx, tok)
	if err != nil {
		t.Fatalf("JWT: %v", err)
	}
	if p.Subject != "u1" || strings.Join(p.Groups, ",") != "team-a" || strings.Join(p.Scopes, " ") != "openid mcp mcp:write" || p.ClientID != ClientID {
		t.Errorf("JWT principal: %+v", p)
	}

	opaque, err := o.Token(ctx, OpaqueClientID, "alice", "pw", resource, "openid", "mcp")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := v.Verify(ctx, opaque); err != nil || p.Subject != "u1" {
		t.Errorf("opaque: %+v %v", p, err)
	}

	for name, get := range map[string]func() (string, error){
		"expired": func() (string, error) {
			return o.Token(ctx, ClientID, "alice", "pw", resource, "openid", "mcp", ExpiredScope)
		},
		"other audience": func() (string, error) {
			return o.Token(ctx, ClientID, "alice", "pw", "https://other.example/mcp", "openid", "mcp")
		},
	} {
		tok, err := get()
		if err != nil {
			t.Fatal(err)
		}
		var e *authn.Error
		if _, err := v.Verify(ctx, tok); !errors.As(err, &e) || e.Code != "invalid_token" {
			t.Errorf("%s: %v, want invalid_token", name, err)
		}
	}
	if _, err := o.Token(ctx, ClientID, "alice", "wrong", resource, "openid"); err == nil {
		t.Error("a wrong password signed in")
	}
}

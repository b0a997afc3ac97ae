package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// BenchmarkGuard measures the guard's own cost per request, in process:
// no authentication, the shared token, and an OAuth JWT of a real OP
// (checked once, then found by its digest).
func BenchmarkGuard(b *testing.B) {
	op, err := testop.Start(alice)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(op.Close)
	const resource = "http://127.0.0.1:9/mcp"
	tok, err := op.Token(context.Background(), testop.ClientID, alice.Username, alice.Password, resource, "openid", "mcp")
	if err != nil {
		b.Fatal(err)
	}
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name, header string
		g            *guard
	}{
		{"none", "", &guard{auth: "none", loopback: true}},
		{"anonymous", "", &guard{auth: "none", anonymous: true, loopback: true}},
		{"token", "Bearer s3cret", &guard{auth: "token", token: []byte("s3cret"), tokenP: authn.Token([]byte("s3cret")), loopback: true}},
		{"oauth", "Bearer " + tok, &guard{auth: "oauth", loopback: true, verifier: authn.New(authn.Options{Resource: resource,
			Issuers: []authn.Issuer{{Issuer: op.Issuer}}, Scopes: []string{"mcp"}})}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := c.g.wrap(next)
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8000/mcp", nil)
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatalf("%s: %d %s", c.name, w.Code, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

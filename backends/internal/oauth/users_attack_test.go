package oauth

import (
	"context"
	"slices"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	"golang.org/x/oauth2"
)

// Signing one person out (logout NAME --subject S) touches nobody else's
// sign-in: not a subject that merely starts or ends like theirs, not one
// with an "@" of its own, not another server's. S is a principal key
// (one issuer's person) or a subject alone (that subject at every issuer).
func TestUsersLogoutOnlyThatSubject(t *testing.T) {
	u := NewUsers(UsersOptions{TokenDir: t.TempDir()})
	s := config.Server{Name: "people", URL: "https://people.example/mcp"}
	keys := []string{
		"u-alice@https://idp.example", "u-alice@https://other.example", "u-alice2@https://idp.example",
		"x-u-alice@https://idp.example", "u-alice@corp.example@https://idp.example", "U-ALICE@https://idp.example",
		"evil@u-alice@https://idp.example",
	}
	for _, k := range keys {
		for _, server := range []string{"people", "other"} {
			si := &userSignIn{Caller: k, signIn: signIn{URL: s.URL, Token: &oauth2.Token{AccessToken: "at-" + k, RefreshToken: "rt-" + k}}}
			if err := u.save(u.entry(server, k), server, si); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		who  string
		want []string
	}{
		{"u-alice", []string{"u-alice@https://idp.example", "u-alice@https://other.example"}},
		{"u-alice@https://idp.example", []string{"u-alice@https://idp.example"}},
		{"u-alice@corp.example", []string{"u-alice@corp.example@https://idp.example"}},
		{"alice", nil},
		{"", nil},
	} {
		got, err := u.Callers("people", c.who)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("Callers(%q) = %q, want %q", c.who, got, c.want)
		}
	}

	// alice at one issuer signs out: every other sign-in is still there.
	if had, err := u.Logout(context.Background(), "people", "u-alice@https://idp.example"); !had || err != nil {
		t.Fatalf("Logout: %v %v", had, err)
	}
	for _, k := range keys {
		for _, server := range []string{"people", "other"} {
			_, _, err := u.Token(context.Background(), config.Server{Name: server, URL: s.URL}, k)
			if gone := err != nil; gone != (k == "u-alice@https://idp.example" && server == "people") {
				t.Errorf("%s at %s after alice's logout: %v", k, server, err)
			}
		}
	}
}

package oauth

import (
	"strings"
	"time"

	"context"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
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

// A sign-in link, and a flow, serve one sign-in: once the person signed
// in, a link issued before (left in a browser's history, pasted into a
// chat) no longer opens, so whoever finds it cannot bind an upstream
// account of theirs to the person in its remaining minutes; a flow begun
// before does not complete. A link issued since (the dashboard's, the next
// call's error) opens.
func TestUsersLinkServesOneSignIn(t *testing.T) {
	t.Parallel()
	a := newUpstreamAS(t)
	now := time.Now()
	u := NewUsers(UsersOptions{TokenDir: t.TempDir(), Callback: "https://gw.example/upstream/callback", Now: func() time.Time { return now }})
	s := config.Server{Name: "up", URL: a.URL + "/mcp"}
	find := func(name string) (config.Server, bool) { return s, name == s.Name }
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()

	link := u.Link("up", "alice@op")
	if _, err := u.OpenLink("up", link); err != nil {
		t.Fatalf("alice's link before she signed in: %v", err)
	}
	first := signInAs(t, u, s, "alice@op", "ALICE", "n1")
	stale := signInAs(t, u, s, "alice@op", "MALLORY", "n2") // begun as well, not completed yet
	now = now.Add(time.Second)
	if _, _, err := u.Complete(ctx, find, first.Get("state"), first.Get("code"), "", "n1"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if _, err := u.OpenLink("up", link); err == nil || !strings.Contains(err.Error(), "used") {
		t.Errorf("alice's link after she signed in with it: %v, want refused", err)
	}
	if _, _, err := u.Complete(ctx, find, stale.Get("state"), stale.Get("code"), "", "n2"); err == nil {
		t.Errorf("a flow begun before alice's sign-in completed after it")
	}
	if tok, _, err := u.Token(ctx, s, "alice@op"); err != nil || !strings.HasPrefix(tok, "access-ALICE-") {
		t.Errorf("alice's token: %q %v, want ALICE's", tok, err)
	}
	if _, err := u.OpenLink("up", u.Link("up", "alice@op")); err != nil {
		t.Errorf("a link issued since: %v", err)
	}
	if _, err := u.OpenLink("up", u.Link("up", "bob@op")); err != nil {
		t.Errorf("bob's link: %v", err)
	}
}

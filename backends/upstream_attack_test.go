package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// A caller refused a credential takes no place among the bounded
// sessions: with the pool full, mallory (whose token the endpoint will
// not exchange) and eve (a passthrough token for another audience) do not
// close the session of a caller who has one — an attacker with many
// subjects and no credential cannot churn everyone's sessions.
func TestUpstreamRefusedCallerEvictsNobody(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, func(o *backends.Options) {
		withSecret(o)
		o.MaxCallerSessions = 1
	})
	if got := whoamiAs(t, e, callerOf("alice", "urn:gateway")); got != "alice" {
		t.Fatalf("alice reached the server as %q", got)
	}
	for range 3 {
		_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("mallory", "urn:gateway")})
		var ce *backends.CallerError
		if !errors.As(err, &ce) {
			t.Fatalf("mallory: %v, want a *CallerError", err)
		}
	}
	if n := e.CallerSessions("far"); n != 1 {
		t.Errorf("%d sessions after mallory's refusals, want alice's", n)
	}
	if got := whoamiAs(t, e, callerOf("alice", "urn:gateway")); got != "alice" {
		t.Fatalf("alice again: %q", got)
	}
	if x := len(te.exchanges()); x != 1 {
		t.Errorf("%d exchanges, want 1: mallory's refused calls closed alice's session", x)
	}

	far := startFar(t)
	p := start(t, []config.Server{{Name: "far", URL: far, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPassthrough, Audience: farAudience}}}, func(o *backends.Options) {
		o.MaxCallerSessions = 1
	})
	if got := whoamiAs(t, p, callerOf("carol", farAudience)); got != "carol" {
		t.Fatalf("carol reached the server as %q", got)
	}
	_, err := p.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("eve", "urn:gateway")})
	var ce *backends.CallerError
	if !errors.As(err, &ce) {
		t.Fatalf("eve's token for the gateway: %v, want a *CallerError", err)
	}
	if n := p.CallerSessions("far"); n != 1 {
		t.Errorf("%d sessions after eve's refusal, want carol's", n)
	}
}

// A server reached per caller whose resources/list names each person's
// own (test://own/SUB) shows each person only their own: alice's
// resources are not bob's to see, and a client without a caller sees
// none of the server's. Each person is shown its templates, and reads
// their own resource on their own session.
func TestUpstreamResourcesNotShared(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t, "-resources"), te)}, withSecret)
	alice, bob := callerOf("alice", "urn:gateway"), callerOf("bob", "urn:gateway")
	for name, c := range map[string]*backends.Caller{"alice": alice, "bob": bob} {
		if got := whoamiAs(t, e, c); got != name {
			t.Fatalf("%s reached the server as %q", name, got)
		}
	}
	farURIs := func(rs []backends.Resource) []string {
		var uris []string
		for _, r := range rs {
			if r.Server == "far" {
				uris = append(uris, r.URI)
			}
		}
		return uris
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "far's lists to be shown to alice", func() bool {
		return len(farURIs(e.ResourcesFor(alice))) > 0
	})
	if uris := farURIs(e.Resources()); len(uris) != 0 {
		t.Errorf("far's resources shown to a client without a caller: %q", uris)
	}
	for _, c := range []struct {
		who        *backends.Caller
		own, other string
	}{{alice, "test://own/alice", "test://own/bob"}, {bob, "test://own/bob", "test://own/alice"}} {
		testutil.WaitFor(t, testutil.DefaultTimeout, "far's lists to be shown to "+c.who.Subject, func() bool {
			return slices.Contains(farURIs(e.ResourcesFor(c.who)), c.own)
		})
		uris := farURIs(e.ResourcesFor(c.who))
		if slices.Contains(uris, c.other) {
			t.Errorf("%s is shown %q: %q", c.who.Subject, c.other, uris)
		}
		if !slices.Contains(uris, "test://t/{id}") {
			t.Errorf("%s is shown far's resources %q: want its template", c.who.Subject, uris)
		}
	}
	res, err := e.Request(context.Background(), "far", "resources/list", nil, backends.CallOptions{Caller: bob})
	if err != nil || !strings.Contains(string(res), "test://own/bob") || strings.Contains(string(res), "alice") {
		t.Errorf("bob's own resources/list: %s %v", res, err)
	}
}

// One subject at two issuers is two people: each gets a session and an
// exchange of their own, never the other's. So are subjects that differ
// only in case, or that hold the separator.
func TestUpstreamSameSubjectOtherIssuer(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, withSecret)
	callers := []*backends.Caller{callerOf("alice", "urn:gateway"), callerOf("alice", "urn:gateway"), callerOf("Alice", "urn:gateway"), callerOf("alice@idp", "urn:gateway")}
	callers[1].Subject = "alice@other-idp"
	for _, c := range callers {
		whoamiAs(t, e, c)
	}
	if n := e.CallerSessions("far"); n != len(callers) {
		t.Errorf("%d sessions for %d people", n, len(callers))
	}
	x := te.exchanges()
	if len(x) != len(callers) {
		t.Fatalf("%d exchanges for %d people", len(x), len(callers))
	}
	for i, c := range callers {
		if x[i]["subject_token"] != c.Token {
			t.Errorf("exchange %d was of another token than %s's", i, c.Subject)
		}
	}
}

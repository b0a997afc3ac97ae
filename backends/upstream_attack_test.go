package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
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

package gateway

import "testing"

// TestBackendRequestOfCallersSession: a backend's request made on a
// caller's own session of a server reached per caller (upstream_auth;
// backends.RequestCaller names the caller) goes to that caller's sessions
// only — never to another person who also sees the server.
func TestBackendRequestOfCallersSession(t *testing.T) {
	g := newPolicyGW(t, nil, testServer("a"))
	g.sessionCaps("alice", `{"roots":{},"sampling":{},"elicitation":{}}`)
	g.sessionCaps("dan", `{"roots":{},"sampling":{},"elicitation":{}}`) // team-a too: sees a
	for range 20 {
		for _, who := range []string{"alice@test", "dan@test"} {
			s, _ := g.gw.clientFor("a", "sampling/createMessage", who)
			if s == nil || s.f.callerIdentity() != who {
				id := ""
				if s != nil {
					id = s.f.callerIdentity()
				}
				t.Fatalf("a request of %s's session went to %q's", who, id)
			}
		}
	}
	if s, _ := g.gw.clientFor("a", "sampling/createMessage", "erin@test"); s != nil {
		t.Errorf("a request of erin's session (no session of hers) went to %s's", s.f.callerIdentity())
	}
}

package gateway

import "testing"

// TestPolicyBackendRequestsOutsideCalls (issue 32 review): a backend's
// request outside any call — roots/list, sampling, elicitation — goes only
// to a session whose policy lets it see that backend, as a call's does
// (the call was allowed). A server the policy hides a caller from used to
// get that caller's roots, its model, or its user's input: the request
// went to any session that declared the capability.
func TestPolicyBackendRequestsOutsideCalls(t *testing.T) {
	g := newPolicyGW(t, nil, testServer("a"), testServer("b"))
	g.sessionCaps("alice", `{"roots":{},"sampling":{},"elicitation":{}}`)
	for _, method := range []string{"roots/list", "sampling/createMessage", "elicitation/create"} {
		if s, _ := g.gw.clientFor("b", method); s != nil {
			t.Errorf("b's %s outside a call goes to alice's session, whose policy hides b", method)
		}
		if s, _ := g.gw.clientFor("a", method); s == nil {
			t.Errorf("a's %s outside a call finds no session: alice's sees a", method)
		}
	}
}

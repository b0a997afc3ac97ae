package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

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

// TestPolicyStatelessTasksPerCaller (issue 32 review): in stateless mode a
// request reaches, and tasks/list lists, only the tasks the gateway
// recorded for its caller. bob used to list alice's task (of server a,
// which his policy hides) and get its status and result by its id: a
// stateless request reached every task, and tasks/list showed every task
// of every backend.
func TestPolicyStatelessTasksPerCaller(t *testing.T) {
	g := newPolicyGWFront(t, HTTPOptions{Stateless: true}, nil, testServer("a", "-tasks"), testServer("b", "-tasks"))
	rpc := func(who, method, params string) string {
		t.Helper()
		_, _, out := g.send(who, "/mcp", map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
		return out
	}
	var created struct {
		Result struct {
			Task struct{ TaskID string } `json:"task"`
		} `json:"result"`
	}
	out := rpc("alice", "tools/call", `{"name":"a.echo","arguments":{"secret":"alice's"},"task":{"ttl":60000}}`)
	if json.Unmarshal([]byte(out), &created) != nil || created.Result.Task.TaskID == "" {
		t.Fatalf("alice's task-augmented call: %s", out)
	}
	id := created.Result.Task.TaskID
	if out := rpc("bob", "tasks/list", `{}`); strings.Contains(out, id) || !strings.Contains(out, `"tasks":[`) {
		t.Errorf("bob's tasks/list: %s", out)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if out := rpc("bob", method, `{"taskId":"`+id+`"}`); strings.Contains(out, "alice's") || !strings.Contains(out, `"code":-32602`) {
			t.Errorf("bob's %s of alice's task: %s", method, out)
		}
	}
	if out := rpc("alice", "tasks/list", `{}`); !strings.Contains(out, id) {
		t.Errorf("alice's tasks/list: %s", out)
	}
	if out := rpc("alice", "tasks/result", `{"taskId":"`+id+`"}`); !strings.Contains(out, "alice's") {
		t.Errorf("alice's tasks/result: %s", out)
	}
}

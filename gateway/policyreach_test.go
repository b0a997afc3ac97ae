package gateway

import (
	"bufio"
	"encoding/json"
	"net/http"
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
		if s, _ := g.gw.clientFor("b", method, ""); s != nil {
			t.Errorf("b's %s outside a call goes to alice's session, whose policy hides b", method)
		}
		if s, _ := g.gw.clientFor("a", method, ""); s == nil {
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
	g := newPolicyGWFront(t, HTTPOptions{Sessionless: true}, nil, testServer("a", "-tasks"), testServer("b", "-tasks"))
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

// TestPolicyBackendNotifications (issue 32 review): a backend's log
// messages and resource updates reach only the clients whose policy lets
// them see that backend. alice's session, whose policy hides b, used to
// get b's log messages (what /status no longer shows her of b) and b's
// updates of a URI she subscribed to at a.
func TestPolicyBackendNotifications(t *testing.T) {
	g := newPolicyGW(t, nil, testServer("a", "-resources"), testServer("b", "-resources"))
	sid, alice := g.sessionOf("alice", `{}`)
	req, _ := http.NewRequest(http.MethodGet, g.url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Who", "alice")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set(sessionIDHeader, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	events := bufio.NewScanner(resp.Body)
	next := func(what string) string { // the next message on the stream
		t.Helper()
		for events.Scan() {
			if d, ok := strings.CutPrefix(events.Text(), "data: "); ok && d != "" {
				return d
			}
		}
		t.Fatalf("the stream ended waiting for %s: %v", what, events.Err())
		return ""
	}

	if out := alice(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r1"}}`); !strings.Contains(out, `"result"`) {
		t.Fatalf("alice subscribes to a's test://r1: %s", out)
	}
	if m := next("a's update"); !strings.Contains(m, "notifications/resources/updated") {
		t.Fatalf("after the subscription: %s", m)
	}
	// b's, then a's log message as a marker: whatever of b's reaches
	// alice arrives before it.
	g.gw.BackendLog("b", json.RawMessage(`{"level":"error","data":"b's secret log"}`))
	g.gw.backendNotification("b", "notifications/resources/updated", json.RawMessage(`{"uri":"test://r1"}`))
	g.gw.BackendLog("a", json.RawMessage(`{"level":"info","data":"a's log"}`))
	for {
		m := next("a's log")
		if strings.Contains(m, "a's log") {
			break
		}
		t.Errorf("alice, whose policy hides b, got: %s", m)
	}
}

// TestPolicyInstructions (issue 32 review): the instructions an initialize
// or a server/discover answers carry only the servers the caller's policy
// lets it see, and the discovery is then no shared cache's (cacheScope
// private). Every backend's instructions, under its server's name, used
// to go to every caller: bob read a's name and runbook.
func TestPolicyInstructions(t *testing.T) {
	g := newPolicyGW(t, nil, testServer("a", "-instructions", "a's runbook"), testServer("b", "-instructions", "b's runbook"))
	for who, want := range map[string]string{"alice": "a", "bob": "b"} {
		other := map[string]string{"a": "b", "b": "a"}[want]
		_, _, init := g.send(who, "/mcp", map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"policy","version":"1"}}}`)
		if !strings.Contains(init, want+"'s runbook") || strings.Contains(init, other+"'s runbook") || strings.Contains(init, "## "+other) {
			t.Errorf("%s's initialize: %s", who, init)
		}
		discover := g.request2026(who, "server/discover", "", `"x":0`)
		if !strings.Contains(discover, want+"'s runbook") || strings.Contains(discover, other+"'s runbook") || !strings.Contains(discover, `"cacheScope":"private"`) {
			t.Errorf("%s's server/discover: %s", who, discover)
		}
	}
}

package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestHTTPTasksPerSession: two HTTP sessions share the backends, and each
// sees and touches only the tasks it created: another session's task id is
// -32602 for tasks/get, tasks/result and tasks/cancel, and tasks/list
// leaves it out.
func TestHTTPTasksPerSession(t *testing.T) {
	t.Parallel()
	g := startHTTP(t, httpConfig(t, nil, tb("a", "-tasks", "-name", "a")))
	rpc := func(sid, method, params string) map[string]any {
		t.Helper()
		resp := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`, nil)
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		// A JSON response, or an event stream whose last data line is it.
		s := string(body)
		if i := strings.LastIndex(s, "data: "); i >= 0 {
			s = strings.TrimSpace(s[i+6:])
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s: %q: %v", method, body, err)
		}
		return m
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	one, two := initRaw(t, g), initRaw(t, g)
	created := rpc(one, "tools/call", `{"name":"a.echo","arguments":{"ms":60000},"task":{"ttl":60000}}`)
	res, _ := created["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("task-augmented call: %v", created)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if c := code(rpc(two, method, `{"taskId":"`+id+`"}`)); c != -32602 {
			t.Errorf("%s of another session's task: code %v, want -32602", method, c)
		}
	}
	list := func(sid string) int {
		r, _ := rpc(sid, "tasks/list", `{}`)["result"].(map[string]any)
		tasks, _ := r["tasks"].([]any)
		return len(tasks)
	}
	if n := list(two); n != 0 {
		t.Errorf("tasks/list of the other session: %d tasks, want 0", n)
	}
	if n := list(one); n != 1 {
		t.Errorf("tasks/list of the owner: %d tasks, want 1", n)
	}
	if r, _ := rpc(one, "tasks/get", `{"taskId":"`+id+`"}`)["result"].(map[string]any); r["taskId"] != id {
		t.Errorf("tasks/get by the owner: %v", r)
	}
	if r, _ := rpc(one, "tasks/cancel", `{"taskId":"`+id+`"}`)["result"].(map[string]any); r["status"] != "cancelled" {
		t.Errorf("tasks/cancel by the owner: %v", r)
	}
}

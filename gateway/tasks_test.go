package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// A finished task's entry ends when the backend's ttl has run out since it
// was recorded, or taskFinishedTTL after the end without one; a task not
// known to be finished stays. The clock is synctest's.
func TestTaskOwnersExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var owners taskOwners
		owners.record("ttl", "a", "", taskState{ttl: time.Second})
		owners.record("none", "a", "", taskState{})
		time.Sleep(2 * time.Second)
		if _, ok := owners.lookup("ttl", ""); !ok {
			t.Fatal("a working task ended with its ttl")
		}
		owners.update("ttl", "a", taskState{final: true})
		owners.update("none", "a", taskState{final: true})
		if _, ok := owners.lookup("ttl", ""); ok {
			t.Error("a finished task past its ttl is still known")
		}
		time.Sleep(taskFinishedTTL - time.Second)
		if _, ok := owners.lookup("none", ""); !ok {
			t.Error("a finished task without ttl ended before taskFinishedTTL")
		}
		time.Sleep(time.Second)
		if _, ok := owners.lookup("none", ""); ok {
			t.Error("a finished task without ttl is known after taskFinishedTTL")
		}
	})
}

// The table never passes its limit; the oldest finished tasks go first.
func TestTaskOwnersLimit(t *testing.T) {
	owners := taskOwners{limit: 100}
	owners.record("working", "a", "", taskState{})
	for i := range 1000 {
		owners.record(fmt.Sprint(i), "a", "", taskState{final: true})
		if n := owners.size(); n > 100 {
			t.Fatalf("%d entries after %d records, limit 100", n, i+2)
		}
	}
	if _, ok := owners.lookup("working", ""); !ok {
		t.Error("the working task went before finished ones")
	}
	if _, ok := owners.lookup("999", ""); !ok {
		t.Error("the newest task went")
	}
	for i := range 1000 {
		owners.record(fmt.Sprint("w", i), "a", "", taskState{})
	}
	if n := owners.size(); n > 100 {
		t.Errorf("%d entries, limit 100", n)
	}
}

// Stateless HTTP requests to a real backend: the gateway-wide table stays
// within its limit however many tasks they create, a task it let go of is
// "Task not found" as an unknown one is, and a finished task whose ttl has
// run out is forgotten though the backend still has it.
func TestHTTPStatelessTasksBounded(t *testing.T) {
	gw, _ := newGateway(t, nil, testServer("tb", "-tasks"))
	gw.tasks.limit = 20
	front := gw.NewHTTPFront(HTTPOptions{Sessionless: true})
	srv := httptest.NewServer(http.HandlerFunc(front.serveMCP))
	defer srv.Close()
	defer front.Close()
	rpc := func(method, params string) (result map[string]any, errMsg string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		s := string(body)
		if i := strings.LastIndex(s, "data: "); i >= 0 {
			s = strings.TrimSpace(s[i+6:])
		}
		var m struct {
			Result map[string]any
			Error  struct{ Message string }
		}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s: %q: %v", method, body, err)
		}
		return m.Result, m.Error.Message
	}
	create := func(ttl int) string {
		t.Helper()
		r, msg := rpc("tools/call", fmt.Sprintf(`{"name":"tb.echo","arguments":{"ms":0},"task":{"ttl":%d}}`, ttl))
		task, _ := r["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if id == "" {
			t.Fatalf("task-augmented call: %v %s", r, msg)
		}
		return id
	}
	first := create(60000)
	for range 100 {
		create(60000)
	}
	if n := gw.tasks.size(); n > 20 {
		t.Errorf("%d tasks recorded after 101 stateless creations, limit 20", n)
	}
	if _, msg := rpc("tasks/get", `{"taskId":"`+first+`"}`); msg != "Task not found: "+first {
		t.Errorf("tasks/get of a task let go: %q, want Task not found", msg)
	}

	short := create(50)
	testutil.WaitFor(t, 10*time.Second, "the task to complete", func() bool {
		r, _ := rpc("tasks/get", `{"taskId":"`+short+`"}`)
		return r["status"] == "completed"
	})
	testutil.WaitFor(t, 10*time.Second, "the finished task to end with its ttl", func() bool {
		_, msg := rpc("tasks/get", `{"taskId":"`+short+`"}`)
		return msg == "Task not found: "+short
	})
}

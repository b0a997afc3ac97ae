package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// startRace starts the gateway with two slow-starting testbackends that
// serve prompts and resources, initializes, and sends msgs in one write —
// once both backends are ready if ready is set, else while they start; it
// returns the replies by id.
func startRace(t *testing.T, ready bool, msgs ...string) map[string]map[string]any {
	t.Helper()
	a := tb("a", "-start-delay", "300ms", "-prompts", "-resources")
	b := tb("b", "-start-delay", "300ms", "-prompts") // no resources: they would collide with a's
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, a, b))
	p.send(initMsg + "\n")
	if r := p.readLine(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	if ready {
		testutil.WaitFor(t, 20*time.Second, "both backends ready", func() bool { return strings.Count(p.Stderr.String(), "backend ready") >= 2 })
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + strings.Join(msgs, "\n") + "\n")
	out := make(map[string]map[string]any)
	for len(out) < len(msgs) {
		r := p.readLine()
		if _, ok := r["id"]; ok {
			out[strings.Trim(idOf(r), `"`)] = r
		}
	}
	return out
}

func req(id, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, id, method, params)
}

func resultLen(r map[string]any, member string) int {
	res, _ := r["result"].(map[string]any)
	list, _ := res[member].([]any)
	return len(list)
}

// The first lists, sent together while the backends start or right after,
// are all complete, and a tools/call sent with them finds its tool.
func TestStartParallelListsComplete(t *testing.T) {
	t.Parallel()
	for i := range 6 {
		r := startRace(t, i%2 == 0,
			req("t", "tools/list", `{}`),
			req("p", "prompts/list", `{}`),
			req("r", "resources/list", `{}`),
			req("rt", "resources/templates/list", `{}`),
			req("c", "tools/call", `{"name":"b.echo","arguments":{"k":1}}`),
		)
		if n := resultLen(r["t"], "tools"); n < 2*6 {
			t.Errorf("run %d: %d tools: %v", i, n, r["t"])
		}
		if n := resultLen(r["p"], "prompts"); n != 2 {
			t.Errorf("run %d: %d prompts: %v", i, n, r["p"])
		}
		if n := resultLen(r["r"], "resources"); n != 1 {
			t.Errorf("run %d: %d resources: %v", i, n, r["r"])
		}
		if n := resultLen(r["rt"], "resourceTemplates"); n != 1 {
			t.Errorf("run %d: %d resource templates: %v", i, n, r["rt"])
		}
		if res, _ := r["c"]["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Errorf("run %d: tools/call with the first list: %v", i, r["c"])
		}
	}
}

// prompts/get and resources/read work before the client listed anything.
func TestStartGetAndReadBeforeList(t *testing.T) {
	t.Parallel()
	r := startRace(t, true,
		req("g", "prompts/get", `{"name":"a.greet","arguments":{"who":"x"}}`),
		req("rd", "resources/read", `{"uri":"test://r1"}`),
		req("rt", "resources/read", `{"uri":"test://t/7"}`),
	)
	for id, r := range r {
		if r["result"] == nil {
			t.Errorf("%s before any list: %v", id, r)
		}
	}
}

// A resource the server serves but does not list (nor any listed template
// matches) is read from the backends that declare resources; a URI none
// serves gets the not-found error.
func TestReadUnlistedResource(t *testing.T) {
	t.Parallel()
	r := startRace(t, true,
		req("u", "resources/read", `{"uri":"other://unlisted"}`),
	)
	if res, _ := r["u"]["result"].(map[string]any); res == nil || len(res["contents"].([]any)) != 1 {
		t.Errorf("unlisted resource: %v", r["u"])
	}
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("plain")))
	p.send(initMsg + "\n" + req("n", "resources/read", `{"uri":"other://unlisted"}`) + "\n")
	p.readLine()
	if r := p.readLine(); errCode(r) != -32602 {
		t.Errorf("no backend serves it: %v", r)
	}
}

// resources/subscribe reaches the backend that lists the URI, and its
// notifications/resources/updated reaches the subscribed client.
func TestResourceSubscription(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("plain"), tb("res", "-resources")))
	p.send(initMsg + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	init := p.readLine()
	caps, _ := init["result"].(map[string]any)["capabilities"].(map[string]any)
	if res, _ := caps["resources"].(map[string]any); res["subscribe"] != true {
		t.Errorf("capabilities: %v", caps)
	}
	p.send(req("s", "resources/subscribe", `{"uri":"test://r1"}`) + "\n")
	var gotResult, gotUpdate bool
	for !gotResult || !gotUpdate {
		r := p.readLine()
		switch {
		case idOf(r) == `"s"`:
			gotResult = r["result"] != nil
			if !gotResult {
				t.Fatalf("subscribe: %v", r)
			}
		case r["method"] == "notifications/resources/updated":
			if params, _ := r["params"].(map[string]any); params["uri"] != "test://r1" {
				t.Errorf("update: %v", r)
			}
			gotUpdate = true
		}
	}
	p.send(req("u", "resources/unsubscribe", `{"uri":"test://r1"}`) + "\n")
	if r := p.readLine(); r["result"] == nil {
		t.Errorf("unsubscribe: %v", r)
	}
}

package gateway

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestPolicyHeldCallBoundToCaller (issue 32): the requestState of a call
// held for input (2026-07-28) is the caller's: another caller retrying
// with it is refused, and the held call still waits for its own caller,
// who gets its result; a retry by the same caller whose token no longer
// lets it call the tool is refused as not found, the policy checked again.
// Another caller used to receive the first caller's result.
func TestPolicyHeldCallBoundToCaller(t *testing.T) {
	g := newPolicyGW(t, nil, testServer("a", "-asks"), testServer("b"))
	type request struct{ method, name, params, answer, want string }
	sample := request{"tools/call", "a.sample", `"name":"a.sample","arguments":{}`,
		`{"role":"assistant","content":{"type":"text","text":"sampled for alice"},"model":"m"}`, "sampled for alice"}
	held := func(who string, r request) (state, key string) {
		t.Helper()
		var first struct {
			Result struct {
				ResultType    string                     `json:"resultType"`
				RequestState  string                     `json:"requestState"`
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
			} `json:"result"`
		}
		out := g.request2026(who, r.method, r.name, r.params)
		if json.Unmarshal([]byte(out), &first) != nil || first.Result.ResultType != "input_required" || len(first.Result.InputRequests) != 1 {
			t.Fatalf("%s's %s: %s", who, r.name, out)
		}
		for k := range first.Result.InputRequests {
			key = k
		}
		return first.Result.RequestState, key
	}
	retry := func(who string, r request, state, key string) string {
		t.Helper()
		return g.request2026(who, r.method, r.name, r.params+`,"requestState":`+strconv.Quote(state)+`,"inputResponses":{`+strconv.Quote(key)+`:`+r.answer+`}`)
	}

	state, key := held("alice", sample)
	if out := retry("bob", sample, state, key); strings.Contains(out, sample.want) || !strings.Contains(out, `"code":-32602`) {
		t.Errorf("bob's retry with alice's requestState: %s", out)
	}
	if out := retry("alice", sample, state, key); !strings.Contains(out, sample.want) || !strings.Contains(out, `"resultType":"complete"`) {
		t.Errorf("alice's retry: %s", out)
	}

	// The policy again, for each kind of held request.
	for _, r := range []request{
		sample,
		{"prompts/get", "a.ask", `"name":"a.ask"`, `{"action":"accept","content":{"name":"Ada"}}`, "hello Ada"},
		{"resources/read", "test://sampled", `"uri":"test://sampled"`, `{"role":"assistant","content":{"type":"text","text":"a word"},"model":"m"}`, "a word"},
	} {
		state, key := held("alice", r)
		if out := retry("alice2", r, state, key); strings.Contains(out, r.want) || !strings.Contains(out, `"code":-32602`) || !strings.Contains(out, "not found") {
			t.Errorf("alice's retry of %s when the policy no longer lets her reach it: %s", r.name, out)
		}
		kind := map[string]string{"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}[r.method]
		if !g.denied("alice2", kind, r.name, "a") {
			t.Errorf("the refused retry of %s was not reported: %+v", r.name, g.denials)
		}
	}
}

package gateway

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// TestBackendRequestStateBoundToCaller (issue 32): a backend of
// 2026-07-28 that answers input_required gives its own requestState, and
// sees one client, the gateway, so it cannot bind the state to the caller.
// Under authentication the gateway does: the client gets the backend's
// state sealed for it; another caller of the same tool retrying with it —
// or with the backend's bare state — is refused as with a state the
// gateway never issued, and never sees the first caller's answers the
// state carries; the caller's own retry reaches the backend with its
// state byte for byte. For a single caller (no principal, the shared
// token) the backend's state passes through untouched. Another caller of
// the tool used to get the first caller's earlier answers. prompts/get and
// resources/read, which may answer input_required too, are bound alike
// (testbackend -asks: its state askState, checked byte for byte).
func TestBackendRequestStateBoundToCaller(t *testing.T) {
	const askState = `"<asked \u00e9 & waiting>"` // testbackend's
	g := newPolicyGW(t, nil, testServer("a", "-tasks-ext", "-asks"))
	const (
		params = `"name":"a.multi_input","arguments":{}`
		ada    = `{"action":"accept","content":{"name":"Ada"}}`
	)
	answer := func(name string) string { return `{"action":"accept","content":{"name":"` + name + `"}}` }
	// call calls a.multi_input as who with requestState state (none if
	// "") and inputResponses responses (none if ""): the result and its
	// requestState member's value, raw.
	call := func(who, state, responses string) (out string, rawState json.RawMessage) {
		t.Helper()
		p := params
		if state != "" {
			p += `,"requestState":` + strconv.Quote(state)
		}
		if responses != "" {
			p += `,"inputResponses":` + responses
		}
		out = g.call2026(who, "a.multi_input", p)
		return out, wire.Member(wire.Member(json.RawMessage(out), "result"), "requestState")
	}
	// firstAnswered is the requestState after the first answer: it
	// carries it (testbackend: Base64 of the answers so far).
	firstAnswered := func(who string) (out string, state json.RawMessage) {
		t.Helper()
		out, s0 := call(who, "", "")
		st, _ := wire.Unquote(s0)
		if !strings.Contains(out, `"resultType":"input_required"`) || st == "" {
			t.Fatalf("%s's call: %s", who, out)
		}
		out, s1 := call(who, st, `{"first":`+ada+`}`)
		if !strings.Contains(out, `"resultType":"input_required"`) || !strings.Contains(out, `"second"`) || strings.Contains(out, `"first"`) {
			t.Fatalf("%s's first answer: %s", who, out)
		}
		return out, s1
	}
	theirs, _ := json.Marshal(map[string]json.RawMessage{"first": json.RawMessage(ada)})
	backendState := strconv.Quote(base64.RawURLEncoding.EncodeToString(theirs)) // the backend's, byte for byte

	// A single caller: the backend's state, untouched.
	for _, who := range []string{"", "token"} {
		_, s1 := firstAnswered(who)
		if string(s1) != backendState {
			t.Errorf("%q: the client got requestState %s, not the backend's %s", who, s1, backendState)
		}
		st, _ := wire.Unquote(s1)
		if out, _ := call(who, st, `{"second":`+answer("Cy")+`}`); !strings.Contains(out, "Got Ada and Cy") {
			t.Errorf("%q's retry: %s", who, out)
		}
	}

	// Callers told apart: the state is alice's.
	_, s1 := firstAnswered("alice")
	state, _ := wire.Unquote(s1)
	if !strings.HasPrefix(state, sealedPrefix) || strings.Contains(state, base64.RawURLEncoding.EncodeToString(theirs)) {
		t.Errorf("alice got requestState %s: not sealed by the gateway", s1)
	}
	sealedFor, err := g.gw.sealer.openState(state, "alice@test", time.Now())
	if err != nil || string(sealedFor.State) != backendState {
		t.Errorf("alice's state holds %s (%v), not the backend's %s", sealedFor.State, err, backendState)
	}
	bare, _ := wire.Unquote(json.RawMessage(backendState))
	for _, st := range []string{state, bare} {
		out, _ := call("dan", st, `{"second":`+answer("Dan")+`}`)
		if strings.Contains(out, "Ada") || !strings.Contains(out, `"code":-32602`) || !strings.Contains(out, errStateInvalid.Error()) {
			t.Errorf("dan's retry with alice's state %.20s…: %s", st, out)
		}
	}
	if out, _ := call("alice", state, `{"second":`+answer("Cy")+`}`); !strings.Contains(out, "Got Ada and Cy") {
		t.Errorf("alice's retry: %s", out)
	}
	// Her state is of this tool's call: another request with it is refused.
	if out := g.request2026("alice", "tools/call", "a.confirm_delete", `"name":"a.confirm_delete","arguments":{},"requestState":`+strconv.Quote(state)); !strings.Contains(out, `"code":-32602`) {
		t.Errorf("alice's state on another tool: %s", out)
	}

	// prompts/get and resources/read.
	type request struct{ method, name, params, answer, want string }
	for _, r := range []request{
		{"prompts/get", "a.ask", `"name":"a.ask"`, `{"action":"accept","content":{"name":"Ada"}}`, "hello Ada"},
		{"resources/read", "test://sampled", `"uri":"test://sampled"`, `{"role":"assistant","content":{"type":"text","text":"a word"},"model":"m"}`, "a word"},
	} {
		// ask returns the requestState as the answer gave it (raw JSON),
		// which retry sends back as it is.
		ask := func(who string) (out string, state string) {
			t.Helper()
			out = g.request2026(who, r.method, r.name, r.params)
			raw := wire.Member(wire.Member(json.RawMessage(out), "result"), "requestState")
			if !strings.Contains(out, `"resultType":"input_required"`) || raw == nil {
				t.Fatalf("%s's %s: %s", who, r.name, out)
			}
			return out, string(raw)
		}
		retry := func(who, state string) string {
			t.Helper()
			return g.request2026(who, r.method, r.name, r.params+`,"requestState":`+state+`,"inputResponses":{"ask":`+r.answer+`}`)
		}
		for _, who := range []string{"", "token"} {
			_, state := ask(who)
			if state != askState {
				t.Errorf("%q's %s: requestState %s, not the backend's %s", who, r.name, state, askState)
			}
			if out := retry(who, state); !strings.Contains(out, r.want) {
				t.Errorf("%q's retry of %s: %s", who, r.name, out)
			}
		}
		_, state := ask("alice")
		sealedState, _ := wire.Unquote(json.RawMessage(state))
		if o, err := g.gw.sealer.openState(sealedState, "alice@test", time.Now()); err != nil || string(o.State) != askState {
			t.Errorf("alice's state of %s holds %s (%v), not the backend's %s", r.name, o.State, err, askState)
		}
		for _, st := range []string{state, askState} {
			if out := retry("dan", st); strings.Contains(out, r.want) || !strings.Contains(out, errStateInvalid.Error()) {
				t.Errorf("dan's retry of %s with alice's state %.20s…: %s", r.name, st, out)
			}
		}
		if out := retry("alice", state); !strings.Contains(out, r.want) {
			t.Errorf("alice's retry of %s: %s", r.name, out)
		}
	}
}

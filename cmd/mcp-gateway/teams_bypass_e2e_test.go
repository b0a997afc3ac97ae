package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// post2026 sends one request of 2026-07-28 to /mcp with a bearer token:
// params are its params without _meta. It returns the answer (JSON, or the
// event stream's last message), decoded.
func (g *teamsGW) post2026(t *testing.T, tok, method, name, params string) (map[string]any, string) {
	t.Helper()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"team","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`
	resp := postMCP(t, g.base+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`,`+meta+`}}`, map[string]string{
		"Authorization": "Bearer " + tok, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("%s %s: %d %q", method, name, resp.StatusCode, raw)
	}
	return msg, string(raw)
}

// TestTeamsAnswerToolsPolicy (issue 32): the answer tools obey the policy,
// which names them gateway.answer*: bob, whose rule allows server b only,
// does not list them and gets not-found for each by every path — MCP of
// 2025-11-25 and of 2026-07-28, lazy mode's call_tool, REST in both forms
// (nor in REST's list) — and never reaches the Responses API; the refusal
// is in the audit log.
// Alice, whose rule allows gateway.answer*, gets the answer. Bob used to
// run them all.
func TestTeamsAnswerToolsPolicy(t *testing.T) {
	op := startOP(t)
	fake := answertest.New(answertest.Respond(e2eModel, answertest.Message("An answer for alice.")))
	t.Cleanup(fake.Close)
	g := startTeams(t, op, map[string]any{
		"answer_tools": true,
		"tools_mode":   "lazy",
		"policy": map[string]any{"rules": []map[string]any{
			{"name": "team-a", "when": `"team-a" in groups`, "allow": []string{"a", "gateway.answer*"}},
			{"name": "team-b", "when": `"team-b" in groups`, "allow": []string{"b"}},
		}},
	}, "OPENAI_API_KEY="+e2eKey, "OPENAI_BASE_URL="+fake.URL)
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	const args = `{"query":"what is new?"}`

	bSid := g.session(t, bTok)
	bTools := listNames(t, g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "tools")
	wantTools(t, bTools, "gateway.call_tool")
	wantNoTools(t, bTools, "answer", "answer_detailed", "answer_quick")
	for i, name := range []string{"answer", "answer_detailed", "answer_quick"} {
		if code, msg := rpcError(g.post(t, bTok, bSid, callMsg(10+i, name, args))); code != -32602 || msg != "Tool not found: "+name {
			t.Errorf("bob calls %s: %d %q, want -32602 Tool not found", name, code, msg)
		}
	}
	if code, msg := rpcError(g.post(t, bTok, bSid, callMsg(20, "gateway.call_tool", `{"name":"answer","arguments":`+args+`}`))); code != -32602 || msg != "Tool not found: answer" {
		t.Errorf("bob's call_tool of answer: %d %q", code, msg)
	}
	if msg, raw := g.post2026(t, bTok, "tools/call", "answer", `"name":"answer","arguments":`+args); msg["result"] != nil || !strings.Contains(raw, "Tool not found: answer") {
		t.Errorf("bob's 2026-07-28 call of answer: %s", raw)
	}
	for _, body := range []string{`{"name":"answer","arguments":` + args + `}`, `{"server":"gateway","toolName":"answer","input":` + args + `}`} {
		if resp, raw := g.rest(t, bTok, body); resp.StatusCode != http.StatusNotFound || !strings.Contains(raw, "TOOL_NOT_FOUND") {
			t.Errorf("bob's REST %s: %d %s", body, resp.StatusCode, raw)
		}
	}
	raw, _ := io.ReadAll(getURL(t, g.base+"/mcp/tools", map[string]string{"Authorization": "Bearer " + bTok}).Body)
	if !strings.Contains(string(raw), `"b.echo"`) || strings.Contains(string(raw), `"answer`) {
		t.Errorf("bob's REST tools: %s", raw)
	}
	if n := fake.Count(); n != 0 {
		t.Errorf("bob's calls reached the Responses API %d times", n)
	}

	aSid := g.session(t, aTok)
	wantTools(t, listNames(t, g.post(t, aTok, aSid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "tools"), "answer", "answer_detailed", "answer_quick")
	if r := g.post(t, aTok, aSid, callMsg(3, "answer", args)); !strings.Contains(answerText(t, r.msg), "An answer for alice.") {
		t.Errorf("alice's answer: %v", r.msg)
	}
	waitAuditDeny(t, g, "u-bob@", "tool answer gateway")
}

// waitAuditDeny waits for a denial of the identity with that prefix, as
// "KIND NAME SERVER", in g's audit log.
func waitAuditDeny(t *testing.T, g *teamsGW, who, want string) {
	t.Helper()
	testutil.WaitFor(t, testutil.DefaultTimeout, "a denial "+want+" of "+who+" in the audit log", func() bool {
		raw, _ := os.ReadFile(g.audit)
		for _, line := range strings.Split(string(raw), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["event"] == "deny" && strings.HasPrefix(fmt.Sprint(e["identity"]), who) &&
				fmt.Sprint(e["kind"], " ", e["tool"], " ", e["server"]) == want {
				return true
			}
		}
		return false
	})
}

// TestTeamsHeldCallBoundToCaller (issue 32): over HTTP a call held for
// input (2026-07-28) is its caller's. Bob retrying with alice's
// requestState is refused and gets nothing of hers; alice's retry gets the
// result. A retry of alice's with a token the policy no longer lets reach
// server a (an opaque one, whose introspection carries no groups) is not
// found. Bob used to get alice's result.
func TestTeamsHeldCallBoundToCaller(t *testing.T) {
	op := startOP(t)
	asks := tb("a", "-asks")
	asks.Protocol = "2025-11-25" // it asks by requests of its own, which the gateway holds
	g := startTeamsOf(t, op, nil, []beServer{asks, tb("b")})
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	held := func() (state, key string) {
		t.Helper()
		msg, raw := g.post2026(t, aTok, "tools/call", "a.sample", `"name":"a.sample","arguments":{}`)
		res, _ := msg["result"].(map[string]any)
		inputs, _ := res["inputRequests"].(map[string]any)
		state, _ = res["requestState"].(string)
		if res["resultType"] != "input_required" || state == "" || len(inputs) != 1 {
			t.Fatalf("alice's a.sample: %s", raw)
		}
		for k := range inputs {
			key = k
		}
		return state, key
	}
	retry := func(tok, state, key string) (map[string]any, string) {
		t.Helper()
		return g.post2026(t, tok, "tools/call", "a.sample", `"name":"a.sample","arguments":{},"requestState":`+strconv.Quote(state)+
			`,"inputResponses":{`+strconv.Quote(key)+`:{"role":"assistant","content":{"type":"text","text":"sampled for alice"},"model":"m"}}`)
	}

	state, key := held()
	if msg, raw := retry(bTok, state, key); msg["result"] != nil || strings.Contains(raw, "sampled for alice") {
		t.Errorf("bob's retry with alice's requestState: %s", raw)
	}
	if msg, raw := retry(aTok, state, key); msg["result"] == nil || !strings.Contains(raw, "sampled for alice") {
		t.Errorf("alice's retry: %s", raw)
	}

	state, key = held()
	opaque := token(t, op, testop.OpaqueClientID, alice, g.resource, "openid", "mcp")
	if msg, raw := retry(opaque, state, key); msg["result"] != nil || !strings.Contains(raw, "Tool not found: a.sample") {
		t.Errorf("alice's retry with a token outside team-a: %s", raw)
	}
}

package gateway

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestRedactEveryAnswer: under gateway.redact: results a secret a backend
// puts in a prompt, a resource's contents, a progress message, a log
// message or a task's result reaches the client masked, as one in a tool's
// result does; without it, as the backend wrote it. The secret follows a
// JSON escape (the backend writes "\nghp_…"), which the masker once took
// for the end of a word.
func TestRedactEveryAnswer(t *testing.T) {
	const secret = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	for _, redact := range []string{"results", "off"} {
		t.Run(redact, func(t *testing.T) {
			c := newRawClient(t, func(cfg *config.Config) { cfg.Gateway.Redact = redact },
				testServer("tb", "-prompts", "-resources", "-tasks", "-say", "\n"+secret))
			got := map[string]string{}
			c.Send(`{"jsonrpc":"2.0","id":"prompt","method":"prompts/get","params":{"name":"tb.greet"}}`)
			c.Send(`{"jsonrpc":"2.0","id":"read","method":"resources/read","params":{"uri":"test://r1"}}`)
			c.Send(`{"jsonrpc":"2.0","id":"complete","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"tb.greet"},"argument":{"name":"who","value":"a"}}}`)
			c.Send(`{"jsonrpc":"2.0","id":"progress","method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":1,"ms":1},"_meta":{"progressToken":"p"}}}`)
			c.Send(`{"jsonrpc":"2.0","id":"log","method":"tools/call","params":{"name":"tb.log","arguments":{"data":"line\n` + secret + `"}}}`)
			c.Send(`{"jsonrpc":"2.0","id":"task","method":"tools/call","params":{"name":"tb.echo","arguments":{"ms":1,"k":"a\t` + secret + `"},"task":{"ttl":60000}}}`)
			want := []string{"prompt", "read", "complete", "result", "notifications/progress", "notifications/message"}
			for slices.ContainsFunc(want, func(k string) bool { return got[k] == "" }) {
				m := c.Next()
				switch {
				case m.Method() != "":
					got[m.Method()] = string(m.Member("params"))
				case m.ID() == `"task"`:
					var created struct {
						Task struct {
							TaskID string `json:"taskId"`
						} `json:"task"`
					}
					json.Unmarshal(m.Member("result"), &created)
					id, _ := json.Marshal(created.Task.TaskID)
					c.Send(`{"jsonrpc":"2.0","id":"result","method":"tasks/result","params":{"taskId":` + string(id) + `}}`)
					got["task"] = string(m.Member("result"))
				default:
					got[strings.Trim(m.ID(), `"`)] = string(m.Member("result")) + string(m.Member("error"))
				}
			}
			for _, what := range want {
				masked := strings.Contains(got[what], "[redacted:github-token]")
				if strings.Contains(got[what], secret) == (redact == "results") || masked != (redact == "results") {
					t.Errorf("%s: %s", what, got[what])
				}
			}
		})
	}
}

// TestRedactHeldCallError: the error of a tool call held for the client's
// input (2026-07-28) is masked as any other call's: the retry that
// completes it used to get the backend's error message as it was
// written, while only the audit record's copy was masked.
func TestRedactHeldCallError(t *testing.T) {
	const secret = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	g := newPolicyGW(t, func(cfg *config.Config) { cfg.Gateway.Redact = "results" }, testServer("a", "-asks"))
	params := `"name":"a.sample","arguments":{"code":-32000}`
	var first struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			RequestState  string                     `json:"requestState"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	out := g.request2026("alice", "tools/call", "a.sample", params)
	if json.Unmarshal([]byte(out), &first) != nil || first.Result.ResultType != "input_required" || len(first.Result.InputRequests) != 1 {
		t.Fatalf("the call: %s", out)
	}
	var key string
	for k := range first.Result.InputRequests {
		key = k
	}
	answer := `{"role":"assistant","content":{"type":"text","text":"line\n` + secret + `"},"model":"m"}`
	out = g.request2026("alice", "tools/call", "a.sample", params+`,"requestState":`+strconv.Quote(first.Result.RequestState)+`,"inputResponses":{`+strconv.Quote(key)+`:`+answer+`}`)
	if !strings.Contains(out, `"code":-32000`) || strings.Contains(out, secret) || !strings.Contains(out, "[redacted:github-token]") {
		t.Errorf("the retry's answer: %s", out)
	}
}

// TestRedactBackendRequests: under gateway.redact: results the text a
// backend asks a client with (elicitation/create's message,
// sampling/createMessage's messages, which go to the client's model) is
// masked as its results are. A 2026-07-28 client got it masked (it comes
// in the call's input_required result) while a 2025-11-25 client, asked by
// a request of the gateway's, got the secret as the backend wrote it.
func TestRedactBackendRequests(t *testing.T) {
	const secret = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	gw, ctx := newGateway(t, func(cfg *config.Config) { cfg.Gateway.Redact = "results" }, testServer("tb", "-tasks-ext"))
	c := serveRawWith(t, ctx, gw, `{"elicitation":{},"sampling":{}}`)
	c.Send(`{"jsonrpc":"2.0","id":"del","method":"tools/call","params":{"name":"tb.confirm_delete","arguments":{"filename":"x\n` + secret + `"}}}`)
	for {
		m := c.Next()
		if m.Method() == "elicitation/create" {
			if params := string(m.Member("params")); strings.Contains(params, secret) || !strings.Contains(params, "[redacted:github-token]") {
				t.Errorf("the elicitation the client is asked: %s", params)
			}
			c.Send(`{"jsonrpc":"2.0","id":` + m.ID() + `,"result":{"action":"accept","content":{"confirm":true}}}`)
			continue
		}
		if m.ID() == `"del"` {
			if out := m.String(); strings.Contains(out, secret) {
				t.Errorf("the result: %s", out)
			}
			return
		}
	}
}

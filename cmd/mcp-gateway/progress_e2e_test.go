package main

// End-to-end test of the answer tools' progress notifications
// (docs/errors.md, "Long answers").

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
)

// slowly delays a reply by d (or until the request is cancelled).
func slowly(d time.Duration, reply answertest.Reply) answertest.Reply {
	return func(w http.ResponseWriter, r *answertest.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		reply(w, r)
	}
}

// TestAnswerProgress: a 6 s answer called with a progressToken sends
// notifications/progress (every 5 s: the interval is checked on synctest's
// clock by TestProgressEveryInterval) until the result, each with the
// client's token, increasing progress and the elapsed time; a call without
// a token gets none.
func TestAnswerProgress(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		slowly(6*time.Second, answertest.Respond("gpt-5.5", answertest.Message("slow answer"))),
		slowly(200*time.Millisecond, answertest.Respond("gpt-5.5", answertest.Message("quick answer"))),
	)
	s := startAnswerGateway(t, srv, answerOpts{})
	s.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"answer","arguments":` + queryArgs("q") + `,"_meta":{"progressToken":"tok-1"}}}`)
	notes := 0
	var last float64
	for {
		m := s.readMessage()
		if m["method"] == "notifications/progress" {
			p, _ := m["params"].(map[string]any)
			if p["progressToken"] != "tok-1" {
				t.Errorf("progress token %v", p["progressToken"])
			}
			v := toFloat(p["progress"])
			if v <= last {
				t.Errorf("progress %v after %v: not increasing", v, last)
			}
			last = v
			if msg, _ := p["message"].(string); !strings.Contains(msg, "s elapsed") {
				t.Errorf("progress message %q", msg)
			}
			notes++
			continue
		}
		if idOf(m) == "7" {
			if m["result"] == nil {
				t.Fatalf("answer: %v", m)
			}
			break
		}
	}
	if notes < 1 {
		t.Errorf("no progress notification in a 6 s answer")
	}

	// Without a token: no progress.
	s.Send(callMsg(8, "answer", queryArgs("q2")))
	for {
		m := s.readMessage()
		if m["method"] == "notifications/progress" {
			b, _ := json.Marshal(m)
			t.Errorf("progress without a progressToken: %s", b)
			continue
		}
		if idOf(m) == "8" {
			break
		}
	}
}

// toFloat reads a decoded JSON number (json.Number or float64).
func toFloat(v any) float64 {
	switch n := v.(type) {
	case json.Number:
		f, _ := n.Float64()
		return f
	case float64:
		return n
	}
	return 0
}

package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestAnswerProgressSteps: with a short interval, an answer that is
// retried reports each step (the attempt, the retry wait) in its progress
// messages, and stops at the result.
func TestAnswerProgressSteps(t *testing.T) {
	t.Parallel()
	srv := answertest.New(
		answertest.Error(http.StatusServiceUnavailable, "server_error", "", "busy"),
		answertest.Slow(400*time.Millisecond, answertest.Respond("gpt-5.5", answertest.Message("ok"))),
	)
	t.Cleanup(srv.Close)
	cfg := config.Defaults()
	cfg.APIKey = "sk-test"
	cfg.OpenAI.BaseURL = srv.URL
	gw := New(Options{
		Config:           cfg,
		Answer:           answer.New(answer.Options{Config: cfg, HTTPClient: srv.Client()}),
		ProgressInterval: 50 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := serveRaw(t, ctx, gw)
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":7}}}`)
	var msgs []string
	for {
		m := c.Next()
		if m.Method() == "notifications/progress" {
			var p struct {
				Token   json.RawMessage `json:"progressToken"`
				Message string          `json:"message"`
			}
			json.Unmarshal(m.Member("params"), &p)
			if string(p.Token) != "7" {
				t.Errorf("token %s", p.Token)
			}
			msgs = append(msgs, p.Message)
			continue
		}
		if m.ID() == "1" {
			if m.Member("result") == nil {
				t.Fatalf("answer failed: %s", m.Member("error"))
			}
			break
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"s elapsed; waiting ", " to retry after HTTP 503", "s elapsed; asking gpt-5.5 (attempt 2 of 4)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the progress messages:\n%s", want, all)
		}
	}
}

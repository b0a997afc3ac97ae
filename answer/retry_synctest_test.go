package answer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// replyTransport answers each request with the next reply, in memory (no
// socket, so that it runs inside a synctest bubble), and records when.
type replyTransport struct {
	replies []answertest.Reply
	at      []time.Time
}

func (rt *replyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	rt.at = append(rt.at, time.Now())
	rec := httptest.NewRecorder()
	rt.replies[0](rec, &answertest.Request{Method: r.Method, Path: r.URL.Path})
	rt.replies = rt.replies[1:]
	return rec.Result(), nil
}

// The waits between attempts are the default backoff — 500 ms, then 1 s,
// each up to a quarter less for jitter — measured in virtual time, and a
// Retry-After is honoured to the millisecond.
func TestRetryWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		busy := answertest.Error(http.StatusServiceUnavailable, "server_error", "", "busy")
		limited := func(w http.ResponseWriter, r *answertest.Request) {
			w.Header().Set("Retry-After-Ms", "2500")
			answertest.Error(http.StatusTooManyRequests, "rate_limit_error", "", "slow down")(w, r)
		}
		rt := &replyTransport{replies: []answertest.Reply{busy, busy, limited, answertest.Respond("m", answertest.Message("ok"))}}
		cfg := config.Defaults()
		cfg.APIKey = testKey
		cfg.OpenAI.BaseURL = "http://fake.invalid/v1"
		cfg.Request.MaxRetries = 3
		svc := New(Options{Config: cfg, HTTPClient: &http.Client{Transport: rt}})
		res, err := svc.Call(context.Background(), "answer", json.RawMessage(`{"query":"q"}`))
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		if res.Answer != "ok" {
			t.Errorf("answer %q", res.Answer)
		}
		if len(rt.at) != 4 {
			t.Fatalf("%d attempts, want 4", len(rt.at))
		}
		for i, want := range []struct{ lo, hi time.Duration }{
			{375 * time.Millisecond, 500 * time.Millisecond},
			{750 * time.Millisecond, time.Second},
			{2500 * time.Millisecond, 2500 * time.Millisecond},
		} {
			if d := rt.at[i+1].Sub(rt.at[i]); d < want.lo || d > want.hi {
				t.Errorf("wait before attempt %d: %s, want %s..%s", i+2, d, want.lo, want.hi)
			}
		}
	})
}

// A caller's deadline ends the wait a Retry-After asked for (30 s) at the
// deadline (1 s), with no second attempt.
func TestCancelDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		later := func(w http.ResponseWriter, r *answertest.Request) {
			w.Header().Set("Retry-After", "30")
			answertest.Error(http.StatusTooManyRequests, "requests", "", "later")(w, r)
		}
		rt := &replyTransport{replies: []answertest.Reply{later, answertest.Respond("m", answertest.Message("ok"))}}
		cfg := config.Defaults()
		cfg.APIKey = testKey
		cfg.OpenAI.BaseURL = "http://fake.invalid/v1"
		svc := New(Options{Config: cfg, HTTPClient: &http.Client{Transport: rt}})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := svc.Call(ctx, "answer", json.RawMessage(`{"query":"q"}`))
		if !errors.Is(err, context.DeadlineExceeded) || len(rt.at) != 1 {
			t.Errorf("err = %v after %d requests", err, len(rt.at))
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %s, want at the deadline (1s)", d)
		}
	})
}

package main

// A fake Anthropic Messages API on loopback, for Claude Code from npm: the
// agent's turns (requests that offer the gateway's tools) are answered by
// the test's script of content blocks, streamed as the API streams them
// (server-sent events: message_start, content_block_start/delta/stop,
// message_delta, message_stop); Claude Code's side requests (a title, a
// quota check: no gateway tools) get a short text; count_tokens a count.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// messagesTurn answers the agent's n-th turn (from 0), whose request body
// is body, with the content blocks of the model's message: text
// ({"type":"text","text":...}) or tool_use ({"type":"tool_use","id","name","input"}).
type messagesTurn func(n int, body map[string]any) []map[string]any

type fakeMessages struct {
	URL  string
	srv  *httptest.Server
	turn messagesTurn

	mu    sync.Mutex
	turns []map[string]any // the agent's requests, in order
}

// newFakeMessages starts the fake; it is closed at the end of the test.
func newFakeMessages(t *testing.T, turn messagesTurn) *fakeMessages {
	t.Helper()
	f := &fakeMessages{turn: turn}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// Turns returns the bodies of the agent's requests so far.
func (f *fakeMessages) Turns() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.turns...)
}

func (f *fakeMessages) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSONBody(w, map[string]any{"input_tokens": len(raw) / 4})
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"fake: no route %s %s"}}`, r.Method, r.URL.Path)
		return
	}
	var blocks []map[string]any
	f.mu.Lock()
	if f.offers(body) {
		n := len(f.turns)
		f.turns = append(f.turns, body)
		blocks = f.turn(n, body)
	} else {
		blocks = []map[string]any{{"type": "text", "text": "ok"}}
	}
	f.mu.Unlock()

	model, _ := body["model"].(string)
	stop := "end_turn"
	for _, b := range blocks {
		if b["type"] == "tool_use" {
			stop = "tool_use"
		}
	}
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": len(raw) / 4, "output_tokens": 1}}
	if stream, _ := body["stream"].(bool); !stream {
		msg["content"], msg["stop_reason"] = blocks, stop
		writeJSONBody(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(typ string, data map[string]any) {
		data["type"] = typ
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	msg["content"] = []any{}
	event("message_start", map[string]any{"message": msg})
	for i, b := range blocks {
		switch b["type"] {
		case "tool_use":
			input, _ := json.Marshal(b["input"])
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		default:
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	event("message_stop", map[string]any{})
}

// offers reports whether a request offers tools: the agent's loop does,
// Claude Code's side requests do not.
func (f *fakeMessages) offers(body map[string]any) bool {
	tools, _ := body["tools"].([]any)
	return len(tools) > 0
}

func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// toolResultOf is a tool_result block as the agent sent it: its text (its
// content as a string, or its text blocks joined) and is_error.
type toolResultOf struct {
	text    string
	isError bool
}

// toolResult finds the tool_result for id in a request's messages.
func toolResult(body map[string]any, id string) (toolResultOf, bool) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		content, _ := m["content"].([]any)
		for _, c := range content {
			c, _ := c.(map[string]any)
			if c["type"] != "tool_result" || c["tool_use_id"] != id {
				continue
			}
			r := toolResultOf{isError: c["is_error"] == true}
			if s, ok := c["content"].(string); ok {
				r.text = s
				return r, true
			}
			var parts []string
			blocks, _ := c["content"].([]any)
			for _, b := range blocks {
				if b, _ := b.(map[string]any); b["type"] == "text" {
					s, _ := b["text"].(string)
					parts = append(parts, s)
				}
			}
			r.text = strings.Join(parts, "\n")
			return r, true
		}
	}
	return toolResultOf{}, false
}

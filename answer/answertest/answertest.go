// Package answertest provides a fake OpenAI Responses API server for tests.
//
// The server speaks the real wire format of POST /v1/responses closely
// enough for github.com/openai/openai-go to decode it: every reply built by
// this package is a complete response object (id, object, created_at,
// status, model, output[], usage, ...) or a JSON error body
// {"error":{"message","type","param","code"}}.
//
// A test scripts the replies in order and afterwards inspects what was sent:
//
//	srv := answertest.New(
//		answertest.RateLimited(0),
//		answertest.Respond("gpt-5.5-2026-01-01",
//			answertest.WebSearchCall("tokyo weather",
//				answertest.URLSource("https://www.jma.go.jp/"),
//				answertest.APISource("oai-weather")),
//			answertest.Message("Sunny.", answertest.URLCitation("https://www.jma.go.jp/", "JMA")),
//		),
//	)
//	defer srv.Close()
//	cfg.OpenAI.BaseURL = srv.URL // already ends in /v1
//	... run the code under test ...
//	srv.Count()       // 2
//	srv.Requests()[1].Body["model"]
//
// When the script runs out, the server answers 500 with an error message
// saying so (and still records the request), so an unexpected extra attempt
// shows up as a failure rather than a hang.
package answertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Raw is the request body as sent.
	Raw []byte
	// Body is Raw decoded as a JSON object; nil when the body is not one.
	Body map[string]any

	ctx context.Context
	srv *Server
}

// Context is the request's context: it is done when the client goes away
// (for example when the caller's context is cancelled).
func (r *Request) Context() context.Context { return r.ctx }

// Reply writes the answer to one request. The builders in this package
// return Replies; a test can also write its own.
type Reply func(w http.ResponseWriter, r *Request)

// Server is a fake Responses API on an httptest.Server. It is safe for
// concurrent use.
type Server struct {
	// URL is the API base URL, ending in /v1, suitable for
	// config.OpenAI.BaseURL or option.WithBaseURL.
	URL string

	srv *httptest.Server

	mu       sync.Mutex
	script   []Reply
	handler  func(n int, r *Request) Reply
	requests []*Request
	canceled int
	cancelCh chan struct{}
	arrived  chan struct{} // closed and replaced at each request
}

// New starts a server that answers the i-th request with replies[i].
// Close it when done.
func New(replies ...Reply) *Server {
	s := &Server{script: append([]Reply(nil), replies...), cancelCh: make(chan struct{}, 64), arrived: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down, blocking until all outstanding requests on
// it have completed (a Slow or Hang reply ends when its client goes away).
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server (http.DefaultClient would do
// as well; this one has its connections closed by Close).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Enqueue appends replies to the script.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// HandleFunc replaces the script: from now on the n-th request (counting
// from 0, including requests already served) gets the Reply f returns.
func (s *Server) HandleFunc(f func(n int, r *Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Count reports how many requests the server has received, on any path.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// WaitRequests waits up to d until the server has received n requests,
// and reports whether it has.
func (s *Server) WaitRequests(n int, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		got, arrived := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-arrived:
		case <-t.C:
			return false
		}
	}
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Canceled reports how many Slow or Hang replies saw their request's
// context end before they finished.
func (s *Server) Canceled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canceled
}

// WaitCanceled waits up to d for a Slow or Hang reply to see its request's
// context end, and reports whether one did. Each cancellation satisfies one
// call.
func (s *Server) WaitCanceled(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.cancelCh:
		return true
	case <-t.C:
		return false
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	raw, _ := io.ReadAll(hr.Body)
	req := &Request{
		Method: hr.Method,
		Path:   hr.URL.Path,
		Header: hr.Header.Clone(),
		Raw:    raw,
		ctx:    hr.Context(),
		srv:    s,
	}
	var body map[string]any
	if json.Unmarshal(raw, &body) == nil {
		req.Body = body
	}

	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	var reply Reply
	switch {
	case s.handler != nil:
		reply = s.handler(n, req)
	case len(s.script) > 0:
		reply = s.script[0]
		s.script = s.script[1:]
	}
	s.mu.Unlock()

	if hr.Method != http.MethodPost || hr.URL.Path != "/v1/responses" {
		Error(http.StatusNotFound, "invalid_request_error", "not_found",
			fmt.Sprintf("answertest: no route %s %s", hr.Method, hr.URL.Path))(w, req)
		return
	}
	if reply == nil {
		Error(http.StatusInternalServerError, "server_error", "answertest_script_exhausted",
			fmt.Sprintf("answertest: no scripted reply for request %d", n+1))(w, req)
		return
	}
	reply(w, req)
}

func (s *Server) noteCanceled() {
	s.mu.Lock()
	s.canceled++
	s.mu.Unlock()
	select {
	case s.cancelCh <- struct{}{}:
	default:
	}
}

// ---- replies ----

// Item is one element of a response's output array (a JSON object).
type Item map[string]any

// Annotation is one annotation of an output_text part.
type Annotation map[string]any

// Source is one entry of a web_search_call's action.sources.
type Source map[string]any

// ResponseOption adjusts the response object Respond writes.
type ResponseOption func(obj map[string]any)

// Respond answers 200 with a completed response object reporting model and
// holding items as its output. The request's instructions, tools, reasoning
// and text settings are echoed as the real API does.
func Respond(model string, items ...Item) Reply {
	return RespondWith(model, items)
}

// RespondWith is Respond with options applied to the response object (for
// example Status("incomplete") or Field("error", ...)).
func RespondWith(model string, items []Item, opts ...ResponseOption) Reply {
	return func(w http.ResponseWriter, r *Request) {
		obj := responseObject(model, items, r)
		for _, o := range opts {
			o(obj)
		}
		writeJSON(w, http.StatusOK, nil, obj)
	}
}

// Stream answers 200 with the response as the API streams it when the
// request says "stream": true (Server-Sent Events, as Codex reads them):
// response.created, then response.output_item.added and
// response.output_item.done for each item, then response.completed with
// the whole response object. Each event carries its type and a
// sequence_number.
func Stream(model string, items ...Item) Reply {
	return func(w http.ResponseWriter, r *Request) {
		obj := responseObject(model, items, r)
		output := obj["output"].([]any)
		created := make(map[string]any, len(obj))
		for k, v := range obj {
			created[k] = v
		}
		created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("x-request-id", "req_answertest")
		w.WriteHeader(http.StatusOK)
		seq := 0
		event := func(typ string, fields map[string]any) {
			fields["type"], fields["sequence_number"] = typ, seq
			seq++
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(fields)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, bytes.TrimSpace(buf.Bytes()))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		event("response.created", map[string]any{"response": created})
		for i, it := range output {
			event("response.output_item.added", map[string]any{"output_index": i, "item": it})
			event("response.output_item.done", map[string]any{"output_index": i, "item": it})
		}
		event("response.completed", map[string]any{"response": obj})
	}
}

// Status sets the response object's status ("completed" by default).
func Status(status string) ResponseOption {
	return func(obj map[string]any) { obj["status"] = status }
}

// Field sets an arbitrary top-level field of the response object.
func Field(key string, value any) ResponseOption {
	return func(obj map[string]any) { obj[key] = value }
}

func responseObject(model string, items []Item, r *Request) map[string]any {
	output := make([]any, 0, len(items))
	textLen := 0
	for i, it := range items {
		m := map[string]any{}
		for k, v := range it {
			m[k] = v
		}
		if _, ok := m["id"]; !ok {
			m["id"] = fmt.Sprintf("%s_%04d", idPrefix(m["type"]), i+1)
		}
		if m["type"] == "message" {
			if parts, ok := m["content"].([]any); ok {
				for _, p := range parts {
					if pm, ok := p.(map[string]any); ok {
						if t, ok := pm["text"].(string); ok {
							textLen += len(t)
						}
					}
				}
			}
		}
		output = append(output, m)
	}
	get := func(k string, def any) any {
		if r != nil && r.Body != nil {
			if v, ok := r.Body[k]; ok {
				return v
			}
		}
		return def
	}
	reasoning := map[string]any{"effort": nil, "summary": nil}
	if rv, ok := get("reasoning", nil).(map[string]any); ok {
		reasoning["effort"] = rv["effort"]
	}
	text := map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"}
	if tv, ok := get("text", nil).(map[string]any); ok && tv["verbosity"] != nil {
		text["verbosity"] = tv["verbosity"]
	}
	inTokens := 0
	if r != nil {
		inTokens = len(r.Raw) / 4
	}
	outTokens := textLen / 4
	return map[string]any{
		"id":                   "resp_answertest",
		"object":               "response",
		"created_at":           1767225600,
		"status":               "completed",
		"background":           false,
		"error":                nil,
		"incomplete_details":   nil,
		"instructions":         get("instructions", nil),
		"max_output_tokens":    nil,
		"max_tool_calls":       nil,
		"model":                model,
		"output":               output,
		"parallel_tool_calls":  true,
		"previous_response_id": nil,
		"reasoning":            reasoning,
		"service_tier":         "default",
		"store":                true,
		"temperature":          1.0,
		"text":                 text,
		"tool_choice":          "auto",
		"tools":                get("tools", []any{}),
		"top_logprobs":         0,
		"top_p":                1.0,
		"truncation":           "disabled",
		"usage": map[string]any{
			"input_tokens":          inTokens,
			"input_tokens_details":  map[string]any{"cached_tokens": 0},
			"output_tokens":         outTokens,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens":          inTokens + outTokens,
		},
		"user":     nil,
		"metadata": map[string]any{},
	}
}

func idPrefix(typ any) string {
	switch typ {
	case "message":
		return "msg"
	case "web_search_call":
		return "ws"
	case "reasoning":
		return "rs"
	case "function_call":
		return "fc"
	}
	return "item"
}

// Message is an assistant message item with one output_text part holding
// text and the given annotations.
func Message(text string, annotations ...Annotation) Item {
	return MessageParts(OutputText(text, annotations...))
}

// OutputText is one output_text content part, for MessageParts.
func OutputText(text string, annotations ...Annotation) map[string]any {
	anns := make([]any, 0, len(annotations))
	for _, a := range annotations {
		m := map[string]any{}
		for k, v := range a {
			m[k] = v
		}
		if m["type"] == "url_citation" {
			if _, ok := m["start_index"]; !ok {
				m["start_index"] = 0
			}
			if _, ok := m["end_index"]; !ok {
				m["end_index"] = len([]rune(text))
			}
		}
		anns = append(anns, m)
	}
	return map[string]any{"type": "output_text", "text": text, "annotations": anns, "logprobs": []any{}}
}

// MessageParts is an assistant message item with the given content parts
// (OutputText values, or raw maps such as {"type":"refusal",...}).
func MessageParts(parts ...map[string]any) Item {
	content := make([]any, len(parts))
	for i, p := range parts {
		content[i] = p
	}
	return Item{"type": "message", "status": "completed", "role": "assistant", "content": content}
}

// Refusal is a refusal content part, for MessageParts.
func Refusal(text string) map[string]any { return map[string]any{"type": "refusal", "refusal": text} }

// URLCitation is a url_citation annotation. Its start_index and end_index
// span the whole text of the part it is attached to.
func URLCitation(url, title string) Annotation {
	return Annotation{"type": "url_citation", "url": url, "title": title}
}

// WebSearchCall is a completed web_search_call item whose action is a
// search for query with the given sources (as returned when the request
// includes "web_search_call.action.sources").
func WebSearchCall(query string, sources ...Source) Item {
	src := make([]any, len(sources))
	for i, s := range sources {
		src[i] = map[string]any(s)
	}
	action := map[string]any{"type": "search", "query": query, "queries": []any{query}}
	if len(sources) > 0 {
		action["sources"] = src
	}
	return Item{"type": "web_search_call", "status": "completed", "action": action}
}

// OpenPage is a completed web_search_call item whose action opened url.
func OpenPage(url string) Item {
	return Item{"type": "web_search_call", "status": "completed", "action": map[string]any{"type": "open_page", "url": url}}
}

// URLSource is a {"type":"url","url":...} search source.
func URLSource(url string) Source { return Source{"type": "url", "url": url} }

// APISource is a {"type":"api","name":...} search source, such as the
// "oai-weather" source of weather answers.
func APISource(name string) Source { return Source{"type": "api", "name": name} }

// FunctionCall is a completed function_call item: the model calls the
// function name (of namespace, when it is not "", as Codex groups an MCP
// server's tools) with arguments, a JSON text.
func FunctionCall(callID, namespace, name, arguments string) Item {
	it := Item{"type": "function_call", "status": "completed", "call_id": callID, "name": name, "arguments": arguments}
	if namespace != "" {
		it["namespace"] = namespace
	}
	return it
}

// Reasoning is a reasoning item with the given summary texts.
func Reasoning(summary ...string) Item {
	sum := make([]any, len(summary))
	for i, s := range summary {
		sum[i] = map[string]any{"type": "summary_text", "text": s}
	}
	return Item{"type": "reasoning", "summary": sum}
}

// Error answers status with the API's error body
// {"error":{"message","type","param":null,"code"}}; an empty code is null.
func Error(status int, errType, code, message string) Reply {
	return ErrorWithHeader(status, nil, errType, code, message)
}

// ErrorWithHeader is Error with extra response headers (Retry-After,
// retry-after-ms, x-request-id, ...).
func ErrorWithHeader(status int, header http.Header, errType, code, message string) Reply {
	return func(w http.ResponseWriter, r *Request) {
		var c any
		if code != "" {
			c = code
		}
		writeJSON(w, status, header, map[string]any{"error": map[string]any{
			"message": message, "type": errType, "param": nil, "code": c,
		}})
	}
}

// RateLimited answers 429 rate_limit_exceeded with Retry-After set to
// retryAfter, in whole seconds (0 means retry at once).
func RateLimited(retryAfter int) Reply {
	h := http.Header{"Retry-After": {strconv.Itoa(retryAfter)}}
	return ErrorWithHeader(http.StatusTooManyRequests, h, "requests", "rate_limit_exceeded",
		"Rate limit reached for requests. Please try again later.")
}

// ServerError answers status (500, 502, 503, ...) with a server_error body
// and "Retry-After: 0", so that a retrying client does not wait.
func ServerError(status int) Reply {
	h := http.Header{"Retry-After": {"0"}}
	return ErrorWithHeader(status, h, "server_error", "",
		"The server had an error while processing your request. Sorry about that!")
}

// Raw answers status with the given headers and body, byte for byte (use it
// for an HTML error page from a proxy, say).
func Raw(status int, header http.Header, body string) Reply {
	return func(w http.ResponseWriter, r *Request) {
		for k, vs := range header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// Malformed answers 200 application/json with a truncated, undecodable
// body.
func Malformed() Reply {
	return Raw(http.StatusOK, http.Header{"Content-Type": {"application/json"}},
		`{"id":"resp_answertest","object":"response","output":[{"type":"mess`)
}

// Slow waits d, then answers with next. If the request's context ends
// first (the client cancelled or timed out), it writes nothing and the
// server counts a cancellation (see Canceled and WaitCanceled).
func Slow(d time.Duration, next Reply) Reply {
	return func(w http.ResponseWriter, r *Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			next(w, r)
		case <-r.ctx.Done():
			r.srv.noteCanceled()
		}
	}
}

// Hang never answers: it waits until the request's context ends and counts
// a cancellation.
func Hang() Reply {
	return func(w http.ResponseWriter, r *Request) {
		<-r.ctx.Done()
		r.srv.noteCanceled()
	}
}

// Drop closes the connection without answering (a connection error for the
// client).
func Drop() Reply {
	return func(w http.ResponseWriter, r *Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("answertest: Drop needs a hijackable ResponseWriter")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, header http.Header, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	for k, vs := range header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", "req_answertest")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

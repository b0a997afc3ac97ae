package answer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testKey   = "sk-test-SECRET-key-0123456789"
	testModel = "gpt-5.5-2026-01-01" // what the fake API reports
)

// testNow is 2026-01-14 20:00 UTC, which is already 2026-01-15 in Tokyo.
var testNow = time.Date(2026, 1, 14, 20, 0, 0, 0, time.UTC)

const today = "2026-01-15"

type fixture struct {
	srv  *answertest.Server
	svc  *Service
	cfg  *config.Config
	logs *testutil.Buffer
}

// newFixture starts a fake API scripted with replies and a Service talking
// to it with debug logs on and tiny retry waits. edit adjusts the config.
func newFixture(t *testing.T, edit func(*config.Config, *Options), replies ...answertest.Reply) *fixture {
	t.Helper()
	srv := answertest.New(replies...)
	t.Cleanup(srv.Close)
	cfg := config.Defaults()
	cfg.APIKey = testKey
	cfg.OpenAI.BaseURL = srv.URL
	cfg.Request.TimeoutMS = 10000
	logs := &testutil.Buffer{}
	opts := Options{
		Config:     cfg,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Debug:      true,
		HTTPClient: srv.Client(),
		Now:        func() time.Time { return testNow },
	}
	if edit != nil {
		edit(cfg, &opts)
	}
	svc := New(opts)
	svc.retry = retryPolicy{base: time.Millisecond, max: 5 * time.Millisecond}
	return &fixture{srv: srv, svc: svc, cfg: cfg, logs: logs}
}

func (f *fixture) call(t *testing.T, tool, args string) (*Result, error) {
	t.Helper()
	return f.svc.Call(context.Background(), tool, json.RawMessage(args))
}

func mustCall(t *testing.T, f *fixture, tool, args string) *Result {
	t.Helper()
	r, err := f.call(t, tool, args)
	if err != nil {
		t.Fatalf("Call(%s, %s): %v", tool, args, err)
	}
	return r
}

func wantAPIError(t *testing.T, err error) *APIError {
	t.Helper()
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v (%T), want *APIError", err, err)
	}
	return ae
}

func jsonEq(t *testing.T, got any, want string) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gv, wv any
	if err := json.Unmarshal(g, &gv); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wv); err != nil {
		t.Fatalf("bad want JSON %s: %v", want, err)
	}
	gb, _ := json.Marshal(gv)
	wb, _ := json.Marshal(wv)
	if !bytes.Equal(gb, wb) {
		t.Errorf("got  %s\nwant %s", gb, wb)
	}
}

// ---- tool definitions ----

func TestTools(t *testing.T) {
	tools := New(Options{Config: config.Defaults()}).Tools()
	want := []struct{ name, desc, schema string }{
		{"answer", "Search the web when needed and provide balanced, well-sourced answers. This is the standard general-purpose tool.",
			`{"type":"object","properties":{"query":{"type":"string"},"recency_days":{"type":"number"},"max_results":{"type":"number"},"domains":{"type":"array","items":{"type":"string"}}},"required":["query"]}`},
		{"answer_detailed", "Perform comprehensive analysis with thorough research and detailed explanations. Best for complex questions requiring deep investigation.",
			`{"type":"object","properties":{"query":{"type":"string"},"recency_days":{"type":"number"},"max_results":{"type":"number"},"domains":{"type":"array","items":{"type":"string"}}},"required":["query"]}`},
		{"answer_quick", "Provide fast, concise answers optimized for speed. Best for simple lookups or urgent questions.",
			`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`},
	}
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for i, w := range want {
		tl := tools[i]
		if tl.Name != w.name || tl.Description != w.desc {
			t.Errorf("tool %d = %q %q, want %q %q", i, tl.Name, tl.Description, w.name, w.desc)
		}
		// Byte-exact, in the seed's key order.
		b, _ := json.Marshal(tl)
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(b, &raw)
		if string(raw["inputSchema"]) != w.schema {
			t.Errorf("%s inputSchema = %s\nwant %s", w.name, raw["inputSchema"], w.schema)
		}
		var out struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(raw["outputSchema"], &out); err != nil {
			t.Fatalf("%s outputSchema: %v", w.name, err)
		}
		if out.Type != "object" || strings.Join(out.Required, ",") != "answer,used_search,citations,model" || len(out.Properties) != 4 {
			t.Errorf("%s outputSchema = %s", w.name, raw["outputSchema"])
		}
	}
	// The schemas are usable by the go-sdk server as they are.
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	for _, tl := range tools {
		s.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	}
}

// ---- parsing ----

func TestNoSearch(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.Reasoning("thinking"),
		answertest.Message("HTTP 404 means the server could not find the resource."),
	))
	r := mustCall(t, f, "answer", `{"query":"What does HTTP 404 mean?"}`)
	jsonEq(t, r, `{"answer":"HTTP 404 means the server could not find the resource.","used_search":false,"citations":[],"model":"gpt-5.5-2026-01-01"}`)
	if r.Citations == nil {
		t.Error("Citations is nil, want empty slice")
	}
}

func TestSearchWithCitations(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("tokyo weather",
			answertest.URLSource("https://www.jma.go.jp/"),
			answertest.URLSource("https://tenki.jp/"),
		),
		answertest.Message("Sunny in Tokyo.",
			answertest.URLCitation("https://www.jma.go.jp/", "気象庁"),
		),
	))
	r := mustCall(t, f, "answer", `{"query":"東京の天気"}`)
	jsonEq(t, r, `{
		"answer":"Sunny in Tokyo.\n\nSources:\n- https://www.jma.go.jp/ (2026-01-15)",
		"used_search":true,
		"citations":[{"url":"https://www.jma.go.jp/","title":"気象庁","published_at":"2026-01-15"}],
		"model":"gpt-5.5-2026-01-01"}`)
}

func TestURLCitationWithoutSearchCallIsSearch(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.Message("A.", answertest.URLCitation("https://a.example/", "A")),
	))
	r := mustCall(t, f, "answer", `{"query":"qqqq"}`)
	if !r.UsedSearch || len(r.Citations) != 1 {
		t.Errorf("got %+v", r)
	}
}

func TestSourcesOnly(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("weather",
			answertest.URLSource("https://www.jma.go.jp/"),
			answertest.APISource("oai-weather"),
		),
		answertest.Message("It is sunny."),
	))
	r := mustCall(t, f, "answer", `{"query":"weather in Tokyo today"}`)
	jsonEq(t, r, `{
		"answer":"It is sunny.\n\nSources:\n- https://www.jma.go.jp/ (2026-01-15)\n- oai-weather (2026-01-15)",
		"used_search":true,
		"citations":[
			{"url":"https://www.jma.go.jp/","published_at":"2026-01-15"},
			{"url":"oai-weather","title":"api","published_at":"2026-01-15"}],
		"model":"gpt-5.5-2026-01-01"}`)
}

func TestSearchWithoutSources(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("weather"),
		answertest.Message("Nothing found."),
	))
	r := mustCall(t, f, "answer", `{"query":"weather in Tokyo today"}`)
	jsonEq(t, r, `{"answer":"Nothing found.","used_search":true,"citations":[],"model":"gpt-5.5-2026-01-01"}`)
}

func TestCitationsMixedAndDeduplicated(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Policy.MaxCitations = 10 },
		answertest.Respond(testModel,
			answertest.WebSearchCall("q1",
				answertest.URLSource("https://a.example/"),
				answertest.APISource("oai-weather"),
				answertest.URLSource("https://z.example/"),
			),
			answertest.WebSearchCall("q2", answertest.APISource("oai-weather"), answertest.APISource("oai-finance")),
			answertest.Message("Part one. ",
				answertest.URLCitation("https://a.example/", "First A"),
				answertest.URLCitation("https://b.example/", "B"),
				answertest.URLCitation("https://a.example/", "Second A"),
			),
			answertest.Message("Part two.", answertest.URLCitation("https://b.example/", "B again")),
		))
	r := mustCall(t, f, "answer", `{"query":"mixed sources"}`)
	jsonEq(t, r.Citations, `[
		{"url":"https://a.example/","title":"First A","published_at":"2026-01-15"},
		{"url":"https://b.example/","title":"B","published_at":"2026-01-15"},
		{"url":"oai-weather","title":"api","published_at":"2026-01-15"},
		{"url":"oai-finance","title":"api","published_at":"2026-01-15"}]`)
	if !strings.HasPrefix(r.Answer, "Part one. Part two.\n\nSources:\n") {
		t.Errorf("answer = %q", r.Answer)
	}
	if strings.Count(r.Answer, "Sources:") != 1 {
		t.Errorf("answer has %d Sources lists: %q", strings.Count(r.Answer, "Sources:"), r.Answer)
	}
}

func TestCapKeepsSourceIDs(t *testing.T) {
	var cits []answertest.Annotation
	for _, u := range []string{"https://1.example/", "https://2.example/", "https://3.example/", "https://4.example/", "https://5.example/"} {
		cits = append(cits, answertest.URLCitation(u, ""))
	}
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("w", answertest.APISource("oai-weather")),
		answertest.Message("Forecast.", cits...),
	))
	r := mustCall(t, f, "answer", `{"query":"forecast please"}`)
	jsonEq(t, r.Citations, `[
		{"url":"https://1.example/","published_at":"2026-01-15"},
		{"url":"https://2.example/","published_at":"2026-01-15"},
		{"url":"oai-weather","title":"api","published_at":"2026-01-15"}]`)
	if want := "Forecast.\n\nSources:\n- https://1.example/ (2026-01-15)\n- https://2.example/ (2026-01-15)\n- oai-weather (2026-01-15)"; r.Answer != want {
		t.Errorf("answer = %q\nwant %q", r.Answer, want)
	}
}

func TestCapURLsOnly(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Policy.MaxCitations = 2 },
		answertest.Respond(testModel,
			answertest.WebSearchCall("w", answertest.URLSource("https://1.example/"), answertest.URLSource("https://2.example/"), answertest.URLSource("https://3.example/")),
			answertest.Message("x"),
		))
	r := mustCall(t, f, "answer", `{"query":"three urls"}`)
	if len(r.Citations) != 2 || r.Citations[0].URL != "https://1.example/" || r.Citations[1].URL != "https://2.example/" {
		t.Errorf("citations = %+v", r.Citations)
	}
}

func TestSourceOwnDate(t *testing.T) {
	src := answertest.URLSource("https://news.example/a")
	src["published_at"] = "2025-12-24T10:00:00Z"
	ann := answertest.URLCitation("https://news.example/b", "B")
	ann["published_date"] = "2025-11-03"
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("w", src, answertest.APISource("oai-news")),
		answertest.Message("News.", ann),
	))
	r := mustCall(t, f, "answer", `{"query":"news today"}`)
	jsonEq(t, r.Citations, `[
		{"url":"https://news.example/b","title":"B","published_at":"2025-11-03"},
		{"url":"oai-news","title":"api","published_at":"2026-01-15"}]`)
}

func TestModelWroteDatedSources(t *testing.T) {
	text := "Sunny.\n\nSources:\n- https://www.jma.go.jp/ (2026-01-15)"
	f := newFixture(t, nil, answertest.Respond(testModel,
		answertest.WebSearchCall("w", answertest.URLSource("https://www.jma.go.jp/")),
		answertest.Message(text, answertest.URLCitation("https://www.jma.go.jp/", "JMA")),
	))
	r := mustCall(t, f, "answer", `{"query":"weather today"}`)
	if r.Answer != text {
		t.Errorf("answer = %q, want it unchanged %q", r.Answer, text)
	}
}

func TestWithSources(t *testing.T) {
	cs := []Citation{{URL: "https://a.example/", PublishedAt: "2026-01-15"}, {URL: "oai-weather", Title: "api", PublishedAt: "2026-01-15"}}
	ours := "Sources:\n- https://a.example/ (2026-01-15)\n- oai-weather (2026-01-15)"
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Answer.", "Answer.\n\n" + ours},
		{"trailing space", "Answer.\n\n", "Answer.\n\n" + ours},
		{"empty", "", ours},
		{"dated list kept", "Answer.\n\nSources:\n- https://x.example/ (2025-01-01)", "Answer.\n\nSources:\n- https://x.example/ (2025-01-01)"},
		{"bold dated list kept", "Answer.\n\n**Sources:**\n1. https://x.example/ — 2025-01-01\n", "Answer.\n\n**Sources:**\n1. https://x.example/ — 2025-01-01\n"},
		{"inline dated kept", "Answer.\nSources: https://x.example/ (2025-01-01)", "Answer.\nSources: https://x.example/ (2025-01-01)"},
		{"undated list replaced", "Answer.\n\nSources:\n- https://x.example/\n- https://y.example/", "Answer.\n\n" + ours},
		{"undated heading replaced", "Answer.\n\n## Sources\n\n* [X](https://x.example/)", "Answer.\n\n" + ours},
		{"word in prose", "Sources say it is sunny.", "Sources say it is sunny.\n\n" + ours},
		{"heading followed by prose", "Sources:\nThe agency and the press agree.", "Sources:\nThe agency and the press agree.\n\n" + ours},
		{"sentence that starts like a header", "Answer.\nSource: the ministry, which publishes it monthly.", "Answer.\nSource: the ministry, which publishes it monthly.\n\n" + ours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := withSources(tc.in, cs); got != tc.want {
				t.Errorf("withSources(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCallToolResult(t *testing.T) {
	r := &Result{Answer: "a < b && c > d", Citations: nil, Model: "m"}
	res := CallToolResult(r)
	text := res.Content[0].(*mcp.TextContent).Text
	want := `{"answer":"a < b && c > d","used_search":false,"citations":[],"model":"m"}`
	if text != want {
		t.Errorf("text = %s\nwant %s", text, want)
	}
	sc, ok := res.StructuredContent.(json.RawMessage)
	if !ok || string(sc) != want {
		t.Errorf("structuredContent = %v", res.StructuredContent)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"structuredContent":{"answer":"a \u003c b`) {
		// json.Marshal of the envelope escapes HTML itself; what matters is
		// that the object is embedded, not a string.
		t.Errorf("marshalled result = %s", b)
	}
}

func TestFailedResponse(t *testing.T) {
	f := newFixture(t, nil, answertest.RespondWith(testModel, nil,
		answertest.Status("failed"),
		answertest.Field("error", map[string]any{"code": "server_error", "message": "The model failed."})))
	_, err := f.call(t, "answer", `{"query":"anything"}`)
	ae := wantAPIError(t, err)
	if ae.Message != "The model failed." || ae.Code != "server_error" {
		t.Errorf("err = %+v", ae)
	}
}

// A response cut short, or one with no text, is a failed answer, not an
// empty or half one; a refusal is the answer.
func TestIncompleteRefusedEmpty(t *testing.T) {
	incomplete := answertest.RespondWith(testModel,
		[]answertest.Item{answertest.Message("The population of Tokyo in 2025 is approx")},
		answertest.Status("incomplete"), answertest.Field("incomplete_details", map[string]any{"reason": "max_output_tokens"}))
	_, err := newFixture(t, nil, incomplete).call(t, "answer", `{"query":"tokyo population"}`)
	if ae := wantAPIError(t, err); ae.Message != "The response is incomplete (max_output_tokens)" {
		t.Errorf("incomplete: message %q", ae.Message)
	}

	for name, items := range map[string][]answertest.Item{
		"no output":      {},
		"reasoning only": {answertest.Reasoning("thinking")},
		"blank text":     {answertest.Message(" \n")},
	} {
		_, err := newFixture(t, nil, answertest.Respond(testModel, items...)).call(t, "answer", `{"query":"anything"}`)
		if ae := wantAPIError(t, err); ae.Message != "The response holds no answer text" {
			t.Errorf("%s: message %q", name, ae.Message)
		}
	}

	refused := answertest.Respond(testModel, answertest.MessageParts(answertest.Refusal("I can't help with that.")))
	if r := mustCall(t, newFixture(t, nil, refused), "answer", `{"query":"something refused"}`); r.Answer != "I can't help with that." {
		t.Errorf("refusal: answer %q", r.Answer)
	}
}

// A preamble in the commentary phase is left out when a final answer
// follows; the rest is joined as openai-go's Response.OutputText joins it.
func TestAnswerWithoutCommentary(t *testing.T) {
	preamble := answertest.Message("I'll look up the current forecast. ")
	preamble["phase"] = "commentary"
	final := answertest.MessageParts(answertest.OutputText("Sunny tomorrow. "), answertest.OutputText("Rain on Friday."))
	final["phase"] = "final_answer"
	r := mustCall(t, newFixture(t, nil, answertest.Respond(testModel, preamble, final)), "answer", `{"query":"weather"}`)
	if r.Answer != "Sunny tomorrow. Rain on Friday." {
		t.Errorf("answer = %q", r.Answer)
	}
	// Without a final answer (older models set no phase), every message counts.
	delete(final, "phase")
	r = mustCall(t, newFixture(t, nil, answertest.Respond(testModel, preamble, final)), "answer", `{"query":"weather"}`)
	if r.Answer != "I'll look up the current forecast. Sunny tomorrow. Rain on Friday." {
		t.Errorf("answer without phases = %q", r.Answer)
	}
}

// Citations are http(s) URLs on one line with clean titles; a source's date
// may be a Unix time, and an odd date field is no date rather than a failed
// answer.
func TestCitationsOnlyWebURLs(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Policy.MaxCitations = 10 },
		answertest.Respond(testModel,
			answertest.WebSearchCall("q",
				answertest.Source{"type": "url", "url": "https://dated.example/", "published_at": 1767225600},
				answertest.Source{"type": "url", "url": "https://odd.example/", "date": []any{2026}},
				answertest.Source{"type": "url", "url": "ftp://files.example/x"},
				answertest.Source{"type": "api", "name": "oai-weather\n- forged (2020-01-01)"},
			),
			answertest.Message("Answer.",
				answertest.URLCitation("javascript:alert(1)", "x"),
				answertest.URLCitation("https://ok.example/a\n- https://forged.example (2020-01-01)", "forged"),
				answertest.URLCitation("/relative/path", "relative"),
			),
		))
	r := mustCall(t, f, "answer", `{"query":"odd citations"}`)
	jsonEq(t, r.Citations, `[
		{"url":"https://dated.example/","published_at":"2026-01-01"},
		{"url":"https://odd.example/","published_at":"2026-01-15"}]`)
	if strings.Contains(r.Answer, "forged") || strings.Contains(r.Answer, "javascript:") {
		t.Errorf("answer = %q", r.Answer)
	}

	titled := answertest.Respond(testModel, answertest.Message("Answer.",
		answertest.URLCitation("https://t.example/", "Title\u202e\x1b[31m red\u0085")))
	r = mustCall(t, newFixture(t, nil, titled), "answer", `{"query":"titles"}`)
	jsonEq(t, r.Citations, `[{"url":"https://t.example/","title":"Title red","published_at":"2026-01-15"}]`)
}

// The debug log never holds the key or the query, whichever way an error
// body echoes them: the key across the 300 characters a body is cut to, the
// query over several lines in a plain-text body, or \u-escaped in JSON.
func TestDebugLogRedactsBeforeCutting(t *testing.T) {
	const query = "東京の天気\nand the week's forecast"
	bodies := []string{
		strings.Repeat("x", 280) + " key=" + testKey,
		"<html>upstream said: " + query + "</html>",
		`{"error":{"message":"bad input: \u6771\u4eac\u306e\u5929\u6c17\nand the week's forecast"}}`,
	}
	for _, body := range bodies {
		f := newFixture(t, nil, answertest.Raw(http.StatusBadRequest, http.Header{"Content-Type": {"text/plain"}}, body))
		if _, err := f.call(t, "answer", `{"query":`+strconv.Quote(query)+`}`); err == nil {
			t.Fatalf("body %q: the call succeeded", body)
		}
		logs := f.logs.String()
		for _, secret := range []string{testKey[:8], "東京", `\u6771`, "week's forecast"} {
			if strings.Contains(logs, secret) {
				t.Errorf("body %q: the debug log holds %q:\n%s", body, secret, logs)
			}
		}
	}
}

package main

// End-to-end tests of the answer tools: the real binary over stdio, talking
// to the answertest fake Responses API. Each test checks the exact contract
// a client sees (the reply envelope, content[0].text, structuredContent,
// error codes and data) and what the fake received (bodies, request counts).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

const (
	// e2eKey is distinctive so that a leak into stderr is unmistakable.
	e2eKey = "test-key-e2e-7f3a9c-DO-NOT-LOG"
	// e2eModel is what the fake reports; the default requested model is
	// gpt-5.5, so a result naming e2eModel proves the reported one is used.
	e2eModel = "gpt-5.5-2026-02-17"
	// secretQuery is a query whose text must never reach a log.
	secretQuery = "zebra-quokka-7731 what is the weather in Tokyo today?"
)

// ---- session helpers ----

type answerOpts struct {
	framed    bool     // send Content-Length framed messages (else lines)
	env       []string // extra environment
	yaml      string   // config file; "" is emptyConfig
	noKey     bool     // leave OPENAI_API_KEY unset
	noBaseURL bool     // leave OPENAI_BASE_URL unset
}

// answerSession is a gateway that has completed the MCP handshake.
type answerSession struct {
	*proc
	framed  bool
	srv     *answertest.Server
	stopped bool
}

// newFake starts the fake Responses API with replies; it is closed at the
// end of the test, after the gateway has exited.
func newFake(t *testing.T, replies ...answertest.Reply) *answertest.Server {
	t.Helper()
	srv := answertest.New(replies...)
	t.Cleanup(srv.Close)
	return srv
}

func startAnswerGateway(t *testing.T, srv *answertest.Server, o answerOpts) *answerSession {
	t.Helper()
	var env []string
	if !o.noKey {
		env = append(env, "OPENAI_API_KEY="+e2eKey)
	}
	if !o.noBaseURL {
		env = append(env, "OPENAI_BASE_URL="+srv.URL)
	}
	env = append(env, o.env...)
	yaml := o.yaml
	if yaml == "" {
		yaml = emptyConfig
	}
	args := []string{"--stdio", "--config", testutil.TempFile(t, "config.yaml", yaml)}
	p := &proc{testutil.StartChild(t, gatewayBin, args, baseEnv(t, env...), testutil.ClientOptions{Framed: o.framed}), t}
	s := &answerSession{proc: p, framed: o.framed, srv: srv}
	// Runs before startGateway's cleanup: a clean exit, no data race.
	t.Cleanup(s.stop)
	s.Send(initMsg)
	if r := s.read(); idOf(r) != "1" || r["result"] == nil {
		t.Fatalf("initialize reply = %v", r)
	}
	s.Send(initializedMsg)
	return s
}

// read reads one reply in the session's framing, skipping the server's
// notifications (tools/list_changed, log messages).
func (s *answerSession) read() map[string]any {
	s.t.Helper()
	for {
		if m := s.Next(); m.Method() == "" {
			return decodeAs(s.t, m, s.framed)
		}
	}
}

// readMessage reads the next message of any kind.
func (s *answerSession) readMessage() map[string]any {
	s.t.Helper()
	return decodeAs(s.t, s.Next(), s.framed)
}

// stop closes stdin and waits for the gateway to exit, so that its stderr
// is complete, and checks that it exited cleanly (a -race binary exits 66
// after reporting a data race). It may be called more than once.
func (s *answerSession) stop() {
	s.t.Helper()
	if s.stopped {
		return
	}
	s.stopped = true
	if !s.Stop(testutil.DefaultTimeout) {
		s.t.Error("gateway still running after stdin EOF")
		return
	}
	if err := s.Err(); err != nil {
		s.t.Errorf("gateway exit after stdin EOF: %v", err)
	}
	if strings.Contains(s.Stderr.String(), "DATA RACE") {
		s.t.Error("the gateway reported a data race")
	}
}

func callMsg(id int, tool, args string) string {
	if args == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, id, tool)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// call sends tools/call and returns its reply (which must carry the id).
func (s *answerSession) call(id int, tool, args string) map[string]any {
	s.t.Helper()
	s.Send(callMsg(id, tool, args))
	r := s.read()
	if idOf(r) != strconv.Itoa(id) {
		s.t.Fatalf("reply to tools/call %d has id %s: %v", id, idOf(r), r)
	}
	return r
}

// queryArgs is {"query": q} as JSON.
func queryArgs(q string) string {
	b, _ := json.Marshal(map[string]string{"query": q})
	return string(b)
}

// ---- result checks ----

var tokyoZone = time.FixedZone("Asia/Tokyo", 9*60*60)

func tokyoDay(t time.Time) string { return t.In(tokyoZone).Format(time.DateOnly) }

// encodeResult is the exact content[0].text a result must be: the four
// fields in order, without HTML escaping, citations never null.
func encodeResult(r answer.Result) string {
	if r.Citations == nil {
		r.Citations = []answer.Citation{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// answerText checks the envelope of a successful answer reply and returns
// content[0].text: one text content, structuredContent equal to the text's
// JSON object, exactly the keys answer, used_search, citations, model.
func answerText(t *testing.T, reply map[string]any) string {
	t.Helper()
	if reply["error"] != nil {
		t.Fatalf("tools/call failed: %v", reply["error"])
	}
	res, ok := reply["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", reply)
	}
	if res["isError"] == true {
		t.Errorf("result has isError: %v", res)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("content = %v, want exactly one part", res["content"])
	}
	c0, _ := content[0].(map[string]any)
	text, ok := c0["text"].(string)
	if c0["type"] != "text" || !ok {
		t.Fatalf("content[0] = %v, want a text part", c0)
	}
	obj := decodeAs(t, testutil.Msg{Raw: []byte(text)}, false)
	if !reflect.DeepEqual(obj, res["structuredContent"]) {
		t.Errorf("structuredContent differs from content[0].text:\n text:              %s\n structuredContent: %v", text, res["structuredContent"])
	}
	if len(obj) != 4 || obj["answer"] == nil || obj["used_search"] == nil || obj["citations"] == nil || obj["model"] == nil {
		t.Errorf("content[0].text keys: %s; want exactly answer, used_search, citations, model", text)
	}
	if cits, ok := obj["citations"].([]any); !ok {
		t.Errorf("citations is not an array: %s", text)
	} else {
		for _, c := range cits {
			cm, _ := c.(map[string]any)
			for k := range cm {
				if k != "url" && k != "title" && k != "published_at" {
					t.Errorf("citation has unexpected key %q: %v", k, cm)
				}
			}
			if _, ok := cm["url"].(string); !ok {
				t.Errorf("citation without url: %v", cm)
			}
			if d, _ := cm["published_at"].(string); len(d) != len("2006-01-02") {
				t.Errorf("citation published_at %q is not YYYY-MM-DD", d)
			}
		}
	}
	return text
}

// wantResult checks that a reply is exactly the answer want(day) builds,
// where day is the access date in Tokyo (either the date when the call
// started or the current one, in case the call spanned midnight).
func wantResult(t *testing.T, reply map[string]any, started time.Time, want func(day string) answer.Result) {
	t.Helper()
	got := answerText(t, reply)
	var exp string
	for _, day := range []string{tokyoDay(started), tokyoDay(time.Now())} {
		if exp = encodeResult(want(day)); got == exp {
			return
		}
	}
	t.Errorf("content[0].text:\n got: %s\nwant: %s", got, exp)
}

// wantError checks a JSON-RPC error reply: code, message and data exactly.
func wantError(t *testing.T, reply map[string]any, code int, message string, data map[string]any) {
	t.Helper()
	e, ok := reply["error"].(map[string]any)
	if !ok {
		t.Fatalf("reply %v: want error %d %q", reply, code, message)
	}
	if errCode(reply) != code || e["message"] != message {
		t.Errorf("error = %d %q, want %d %q (%v)", errCode(reply), e["message"], code, message, e)
	}
	got, _ := json.Marshal(e["data"])
	exp, _ := json.Marshal(data)
	if !bytes.Equal(got, exp) {
		t.Errorf("error data = %s, want %s", got, exp)
	}
}

// wantCount checks how many requests the fake received.
func wantCount(t *testing.T, srv *answertest.Server, n int) {
	t.Helper()
	if got := srv.Count(); got != n {
		t.Errorf("the fake API received %d requests, want %d", got, n)
	}
}

// fakeBody returns the JSON body of the fake's i-th request.
func fakeBody(t *testing.T, srv *answertest.Server, i int) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("the fake received %d requests, want at least %d", len(reqs), i+1)
	}
	if reqs[i].Body == nil {
		t.Fatalf("request %d body is not a JSON object: %q", i, reqs[i].Raw)
	}
	return reqs[i].Body
}

func jsonEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	// Normalise got through JSON so that numbers compare alike.
	gb, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(gb, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, gb, want)
	}
}

// ---- tools/list ----

func TestAnswerToolsListSchemas(t *testing.T) {
	srv := newFake(t)
	s := startAnswerGateway(t, srv, answerOpts{framed: true})
	s.Send(listMsg)
	reply := s.read()
	res, _ := reply["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	full := `{"type":"object","properties":{"query":{"type":"string"},"recency_days":{"type":"number"},"max_results":{"type":"number"},"domains":{"type":"array","items":{"type":"string"}}},"required":["query"]}`
	want := map[string][2]string{
		"answer":          {"Search the web when needed and provide balanced, well-sourced answers. This is the standard general-purpose tool.", full},
		"answer_detailed": {"Perform comprehensive analysis with thorough research and detailed explanations. Best for complex questions requiring deep investigation.", full},
		"answer_quick":    {"Provide fast, concise answers optimized for speed. Best for simple lookups or urgent questions.", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`},
	}
	seen := 0
	for _, tl := range tools {
		tool, _ := tl.(map[string]any)
		name, _ := tool["name"].(string)
		w, ok := want[name]
		if !ok {
			continue
		}
		seen++
		if tool["description"] != w[0] {
			t.Errorf("%s description = %q", name, tool["description"])
		}
		jsonEqual(t, name+" inputSchema", tool["inputSchema"], w[1])
		out, ok := tool["outputSchema"].(map[string]any)
		if !ok {
			t.Errorf("%s has no outputSchema: %v", name, tool)
			continue
		}
		jsonEqual(t, name+" outputSchema.type", out["type"], `"object"`)
		jsonEqual(t, name+" outputSchema.required", out["required"], `["answer","used_search","citations","model"]`)
		props, _ := out["properties"].(map[string]any)
		for k, typ := range map[string]string{"answer": "string", "used_search": "boolean", "citations": "array", "model": "string"} {
			p, _ := props[k].(map[string]any)
			if p["type"] != typ {
				t.Errorf("%s outputSchema.properties.%s = %v, want type %s", name, k, props[k], typ)
			}
		}
		if c, _ := props["citations"].(map[string]any); c != nil {
			items, _ := c["items"].(map[string]any)
			jsonEqual(t, name+" citation required", items["required"], `["url","published_at"]`)
		}
	}
	if seen != 3 {
		t.Errorf("tools/list = %v, want the three answer tools", reply)
	}
	wantCount(t, srv, 0)
}

// ---- results ----

// A stable-knowledge answer: no search, no citations, no Sources trailer;
// the model reported by the API, not the requested one.
func TestAnswerNoSearch(t *testing.T) {
	const text = "HTTP 404 means Not Found: the server has no resource <at that URL> & says so."
	srv := newFake(t, answertest.Respond(e2eModel, answertest.Message(text)))
	s := startAnswerGateway(t, srv, answerOpts{})
	start := time.Now()
	reply := s.call(3, "answer", `{"query":"What does HTTP 404 mean?"}`)
	wantResult(t, reply, start, func(string) answer.Result {
		return answer.Result{Answer: text, UsedSearch: false, Citations: []answer.Citation{}, Model: e2eModel}
	})
	if got := answerText(t, reply); !strings.Contains(got, "<at that URL> &") || !strings.Contains(got, `"citations":[]`) {
		t.Errorf("text must not HTML-escape and must have citations []: %s", got)
	}
	wantCount(t, srv, 1)
	req := srv.Requests()[0]
	if req.Method != http.MethodPost || req.Path != "/v1/responses" {
		t.Errorf("request = %s %s, want POST /v1/responses", req.Method, req.Path)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer "+e2eKey {
		t.Errorf("Authorization = %q, want the key from OPENAI_API_KEY", got)
	}
	b := fakeBody(t, srv, 0)
	if b["model"] != "gpt-5.5" {
		t.Errorf("requested model = %v, want the default gpt-5.5", b["model"])
	}
	instr, _ := b["instructions"].(string)
	if instr != answer.BuiltinPolicy(start) && instr != answer.BuiltinPolicy(time.Now()) {
		t.Errorf("instructions are not the builtin policy with today's date:\n%s", instr)
	}
	jsonEqual(t, "input", b["input"], `"What does HTTP 404 mean?\n[Hints] recency_days=60, max_results=5."`)
	jsonEqual(t, "tools", b["tools"], `[{"type":"web_search"}]`)
	jsonEqual(t, "include", b["include"], `["web_search_call.action.sources"]`)
}

// url_citation annotations are the citations (URL sources add nothing) and
// the answer gets the Sources trailer with access dates.
func TestAnswerSearchURLCitations(t *testing.T) {
	const jma, tenki = "https://www.jma.go.jp/bosai/forecast/", "https://tenki.jp/forecast/3/16/"
	srv := newFake(t, answertest.Respond(e2eModel,
		answertest.WebSearchCall("tokyo weather today",
			answertest.URLSource(jma), answertest.URLSource("https://weathernews.jp/")),
		answertest.Message("Tokyo: sunny, high 12°C.",
			answertest.URLCitation(jma, "JMA forecast"), answertest.URLCitation(tenki, "tenki.jp")),
	))
	s := startAnswerGateway(t, srv, answerOpts{framed: true})
	start := time.Now()
	reply := s.call(4, "answer", queryArgs("Tokyo weather today?"))
	wantResult(t, reply, start, func(day string) answer.Result {
		return answer.Result{
			Answer:     "Tokyo: sunny, high 12°C.\n\nSources:\n- " + jma + " (" + day + ")\n- " + tenki + " (" + day + ")",
			UsedSearch: true,
			Citations:  []answer.Citation{{URL: jma, Title: "JMA forecast", PublishedAt: day}, {URL: tenki, Title: "tenki.jp", PublishedAt: day}},
			Model:      e2eModel,
		}
	})
	wantCount(t, srv, 1)
}

// Without url_citation annotations the search sources are the citations: a
// URL by its URL, an API source by its name with its type as the title.
func TestAnswerSourcesOnly(t *testing.T) {
	const jma = "https://www.jma.go.jp/"
	srv := newFake(t, answertest.Respond(e2eModel,
		answertest.WebSearchCall("weather tokyo", answertest.URLSource(jma), answertest.APISource("oai-weather")),
		answertest.Message("Sunny, 12°C."),
	))
	s := startAnswerGateway(t, srv, answerOpts{})
	start := time.Now()
	reply := s.call(5, "answer_quick", queryArgs("Weather in Tokyo now?"))
	wantResult(t, reply, start, func(day string) answer.Result {
		return answer.Result{
			Answer:     "Sunny, 12°C.\n\nSources:\n- " + jma + " (" + day + ")\n- oai-weather (" + day + ")",
			UsedSearch: true,
			Citations:  []answer.Citation{{URL: jma, PublishedAt: day}, {URL: "oai-weather", Title: "api", PublishedAt: day}},
			Model:      e2eModel,
		}
	})
	if got := answerText(t, reply); !strings.Contains(got, `{"url":"oai-weather","title":"api","published_at":"`) {
		t.Errorf("API source citation not as {url: oai-weather, title: api}: %s", got)
	}
	wantCount(t, srv, 1)
}

// The same URL cited twice (in two parts) and the same source ID twice give
// one citation each; the first title wins; with url_citation present, URL
// sources are dropped but the source ID is kept.
func TestAnswerDuplicateCitationsRemoved(t *testing.T) {
	const a, b = "https://example.com/a", "https://example.com/b"
	srv := newFake(t, answertest.Respond(e2eModel,
		answertest.WebSearchCall("q", answertest.URLSource(a), answertest.APISource("oai-weather"),
			answertest.APISource("oai-weather"), answertest.URLSource(b)),
		answertest.MessageParts(
			answertest.OutputText("First part. ", answertest.URLCitation(a, "A first"), answertest.URLCitation(b, "B")),
			answertest.OutputText("Second part.", answertest.URLCitation(a, "A second"), answertest.URLCitation(b, "B again")),
		),
	))
	s := startAnswerGateway(t, srv, answerOpts{framed: true})
	start := time.Now()
	reply := s.call(6, "answer", queryArgs("duplicates"))
	wantResult(t, reply, start, func(day string) answer.Result {
		return answer.Result{
			Answer:     "First part. Second part.\n\nSources:\n- " + a + " (" + day + ")\n- " + b + " (" + day + ")\n- oai-weather (" + day + ")",
			UsedSearch: true,
			Citations: []answer.Citation{
				{URL: a, Title: "A first", PublishedAt: day},
				{URL: b, Title: "B", PublishedAt: day},
				{URL: "oai-weather", Title: "api", PublishedAt: day},
			},
			Model: e2eModel,
		}
	})
}

// MAX_CITATIONS caps the list, and the API's source ID survives the cap
// (the original dropped it: it was last in line).
func TestAnswerMaxCitationsKeepsSourceID(t *testing.T) {
	const a, b, c = "https://example.com/1", "https://example.com/2", "https://example.com/3"
	srv := newFake(t, answertest.Respond(e2eModel,
		answertest.WebSearchCall("q", answertest.APISource("oai-weather")),
		answertest.Message("Capped.", answertest.URLCitation(a, "one"), answertest.URLCitation(b, "two"), answertest.URLCitation(c, "three")),
	))
	s := startAnswerGateway(t, srv, answerOpts{env: []string{"MAX_CITATIONS=2"}})
	start := time.Now()
	reply := s.call(7, "answer", queryArgs("cap"))
	wantResult(t, reply, start, func(day string) answer.Result {
		return answer.Result{
			Answer:     "Capped.\n\nSources:\n- " + a + " (" + day + ")\n- oai-weather (" + day + ")",
			UsedSearch: true,
			Citations:  []answer.Citation{{URL: a, Title: "one", PublishedAt: day}, {URL: "oai-weather", Title: "api", PublishedAt: day}},
			Model:      e2eModel,
		}
	})
}

// An answer that already ends with a dated Sources list is left as it is:
// never a second list.
func TestAnswerModelSourcesListNotDuplicated(t *testing.T) {
	const a = "https://example.com/news"
	text := "The release is out.\n\nSources:\n- " + a + " (2026-01-10)"
	srv := newFake(t, answertest.Respond(e2eModel,
		answertest.WebSearchCall("release", answertest.URLSource(a)),
		answertest.Message(text, answertest.URLCitation(a, "News")),
	))
	s := startAnswerGateway(t, srv, answerOpts{framed: true})
	start := time.Now()
	reply := s.call(8, "answer", queryArgs("Is the release out?"))
	wantResult(t, reply, start, func(day string) answer.Result {
		return answer.Result{Answer: text, UsedSearch: true, Citations: []answer.Citation{{URL: a, Title: "News", PublishedAt: day}}, Model: e2eModel}
	})
	var obj struct{ Answer string }
	_ = json.Unmarshal([]byte(answerText(t, reply)), &obj)
	if n := strings.Count(obj.Answer, "Sources:"); n != 1 {
		t.Errorf("answer has %d Sources lists, want 1: %q", n, obj.Answer)
	}
}

// The requested model is MODEL_ANSWER; the reported one is what the API
// says answered. A non-gpt-5, non-o model gets neither reasoning nor
// text.verbosity.
func TestAnswerReportsRespondingModel(t *testing.T) {
	const reported = "gpt-4.1-2025-04-14"
	srv := newFake(t, answertest.Respond(reported, answertest.Message("Hello.")))
	s := startAnswerGateway(t, srv, answerOpts{framed: true, env: []string{"MODEL_ANSWER=gpt-4.1"}})
	start := time.Now()
	reply := s.call(9, "answer", queryArgs("Say hello"))
	wantResult(t, reply, start, func(string) answer.Result {
		return answer.Result{Answer: "Hello.", Citations: []answer.Citation{}, Model: reported}
	})
	b := fakeBody(t, srv, 0)
	if b["model"] != "gpt-4.1" {
		t.Errorf("requested model = %v, want gpt-4.1 (MODEL_ANSWER)", b["model"])
	}
	if r, ok := b["reasoning"].(map[string]any); ok && r["effort"] != nil {
		t.Errorf("reasoning.effort sent to gpt-4.1: %v", b["reasoning"])
	}
	if tx, ok := b["text"].(map[string]any); ok && tx["verbosity"] != nil {
		t.Errorf("text.verbosity sent to gpt-4.1: %v", b["text"])
	}
}

// Each profile's request: model, reasoning.effort and text.verbosity per
// model family, missing fields inherited from answer, the policy file as
// instructions, the hints line from arguments over search.defaults, domains
// as web_search filters, the include list.
func TestAnswerProfilesRequestBody(t *testing.T) {
	policy, err := filepath.Abs("testdata/answer_policy.md")
	if err != nil {
		t.Fatal(err)
	}
	policyText, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`gateway: { startup_timeout_ms: 5000, first_start_wait_ms: 5000 }
model_profiles:
  answer:          { model: gpt-5.2, reasoning_effort: medium, verbosity: low }
  answer_detailed: { model: o3, reasoning_effort: high, verbosity: high }
  answer_quick:    { verbosity: high }
search:
  defaults: { recency_days: 30, max_results: 4, domains: [example.org] }
policy:
  system: { source: file, path: %q, merge: replace }
`, policy)
	srv := newFake(t,
		answertest.Respond("gpt-5.2-2025-12-11", answertest.Message("one")),
		answertest.Respond("o3-2025-04-16", answertest.Message("two")),
		answertest.Respond("gpt-5.2-2025-12-11", answertest.Message("three")),
	)
	s := startAnswerGateway(t, srv, answerOpts{yaml: yaml})

	calls := []struct {
		tool, args, model, reply string
		reasoning, text          string // expected JSON, "" for absent
		input, tools             string
	}{
		{
			"answer", `{"query":"Q one","recency_days":7,"max_results":3,"domains":["jma.go.jp"," weather.com "]}`,
			"gpt-5.2", "gpt-5.2-2025-12-11", `"medium"`, `"low"`,
			"Q one\n[Hints] recency_days=7, max_results=3. domains: jma.go.jp, weather.com",
			`[{"type":"web_search","filters":{"allowed_domains":["jma.go.jp","weather.com"]}}]`,
		},
		{
			"answer_detailed", `{"query":"Q two"}`,
			"o3", "o3-2025-04-16", `"high"`, "",
			"Q two\n[Hints] recency_days=30, max_results=4. domains: example.org",
			`[{"type":"web_search","filters":{"allowed_domains":["example.org"]}}]`,
		},
		{
			// answer_quick takes only query: the other arguments are ignored.
			// Its model comes from answer; reasoning_effort low is the
			// built-in answer_quick default that the YAML merges into.
			"answer_quick", `{"query":"Q three","recency_days":1,"domains":["ignored.example"]}`,
			"gpt-5.2", "gpt-5.2-2025-12-11", `"low"`, `"high"`,
			"Q three\n[Hints] recency_days=30, max_results=4. domains: example.org",
			`[{"type":"web_search","filters":{"allowed_domains":["example.org"]}}]`,
		},
	}
	for i, c := range calls {
		start := time.Now()
		reply := s.call(10+i, c.tool, c.args)
		want := []string{"one", "two", "three"}[i]
		wantResult(t, reply, start, func(string) answer.Result {
			return answer.Result{Answer: want, Citations: []answer.Citation{}, Model: c.reply}
		})
		b := fakeBody(t, srv, i)
		if b["model"] != c.model {
			t.Errorf("%s: model = %v, want %s", c.tool, b["model"], c.model)
		}
		var effort, verbosity any
		if r, ok := b["reasoning"].(map[string]any); ok {
			effort = r["effort"]
		}
		if tx, ok := b["text"].(map[string]any); ok {
			verbosity = tx["verbosity"]
		}
		for _, f := range []struct {
			name string
			got  any
			want string
		}{{"reasoning.effort", effort, c.reasoning}, {"text.verbosity", verbosity, c.text}} {
			if f.want == "" {
				if f.got != nil {
					t.Errorf("%s: %s = %v, want absent for %s", c.tool, f.name, f.got, c.model)
				}
				continue
			}
			jsonEqual(t, c.tool+" "+f.name, f.got, f.want)
		}
		if b["instructions"] != strings.TrimSpace(string(policyText)) {
			t.Errorf("%s: instructions = %q, want the policy file's text", c.tool, b["instructions"])
		}
		if b["input"] != c.input {
			t.Errorf("%s: input = %q, want %q", c.tool, b["input"], c.input)
		}
		jsonEqual(t, c.tool+" tools", b["tools"], c.tools)
		jsonEqual(t, c.tool+" include", b["include"], `["web_search_call.action.sources"]`)
	}
	wantCount(t, srv, 3)
}

// ---- routing ----

// OPENAI_BASE_URL alone routes to the fake, even over a YAML base_url (the
// original ignored the variable); the YAML base_url works without it.
func TestAnswerBaseURLFromEnv(t *testing.T) {
	srv := newFake(t, answertest.Respond(e2eModel, answertest.Message("via env")))
	dead := "gateway: { startup_timeout_ms: 5000, first_start_wait_ms: 5000 }\nopenai: { base_url: \"http://127.0.0.1:9/v1\" }\nrequest: { max_retries: 0 }\n"
	s := startAnswerGateway(t, srv, answerOpts{yaml: dead})
	start := time.Now()
	wantResult(t, s.call(3, "answer", queryArgs("env route")), start, func(string) answer.Result {
		return answer.Result{Answer: "via env", Citations: []answer.Citation{}, Model: e2eModel}
	})
	wantCount(t, srv, 1)

	srv2 := newFake(t, answertest.Respond(e2eModel, answertest.Message("via yaml")))
	yaml := fmt.Sprintf("gateway: { startup_timeout_ms: 5000, first_start_wait_ms: 5000 }\nopenai: { base_url: %q }\n", srv2.URL)
	s2 := startAnswerGateway(t, srv2, answerOpts{framed: true, yaml: yaml, noBaseURL: true})
	start = time.Now()
	wantResult(t, s2.call(3, "answer", queryArgs("yaml route")), start, func(string) answer.Result {
		return answer.Result{Answer: "via yaml", Citations: []answer.Citation{}, Model: e2eModel}
	})
	wantCount(t, srv2, 1)
}

// ---- retries, timeouts, cancellation ----

// A 429 with Retry-After: 0, then success: two requests, one answer.
func TestAnswerRetryThenSuccess(t *testing.T) {
	srv := newFake(t, answertest.RateLimited(0), answertest.Respond(e2eModel, answertest.Message("after retry")))
	s := startAnswerGateway(t, srv, answerOpts{})
	start := time.Now()
	wantResult(t, s.call(3, "answer", queryArgs("retry me")), start, func(string) answer.Result {
		return answer.Result{Answer: "after retry", Citations: []answer.Citation{}, Model: e2eModel}
	})
	wantCount(t, srv, 2)
}

// alwaysFail makes every request to srv fail with a retryable 503 whose
// message is msg (Retry-After: 0, so retries do not wait).
func alwaysFail(srv *answertest.Server, msg string) {
	reply := answertest.ErrorWithHeader(http.StatusServiceUnavailable, http.Header{"Retry-After": {"0"}},
		"server_error", "overloaded", msg)
	srv.HandleFunc(func(int, *answertest.Request) answertest.Reply { return reply })
}

// OPENAI_MAX_RETRIES=2: exactly three requests, then -32001 with the API's
// own message.
func TestAnswerRetriesExhausted(t *testing.T) {
	const msg = "e2e: the engine is overloaded, try again later"
	srv := newFake(t)
	alwaysFail(srv, msg)
	s := startAnswerGateway(t, srv, answerOpts{framed: true, env: []string{"OPENAI_MAX_RETRIES=2"}})
	wantError(t, s.call(3, "answer", queryArgs("exhaust")), -32001, "answer failed", map[string]any{"message": msg})
	wantCount(t, srv, 3)
}

// With the default max_retries (3) a failing API sees exactly four
// requests: one retry layer, not the original's two multiplied (12).
func TestAnswerRetriesSingleLayer(t *testing.T) {
	const msg = "e2e: single layer"
	srv := newFake(t)
	alwaysFail(srv, msg)
	s := startAnswerGateway(t, srv, answerOpts{})
	wantError(t, s.call(3, "answer", queryArgs("count the attempts")), -32001, "answer failed", map[string]any{"message": msg})
	wantCount(t, srv, 4)
	// A second call makes four more, not a shared budget nor extra layers.
	wantError(t, s.call(4, "answer_quick", queryArgs("count again")), -32001, "answer failed", map[string]any{"message": msg})
	wantCount(t, srv, 8)
}

// An attempt over OPENAI_API_TIMEOUT fails the call with -32001 and is not
// retried; the fake sees the request go away.
func TestAnswerTimeoutNotRetried(t *testing.T) {
	srv := newFake(t, answertest.Slow(time.Minute, answertest.Respond(e2eModel, answertest.Message("too late"))))
	s := startAnswerGateway(t, srv, answerOpts{framed: true, env: []string{"OPENAI_API_TIMEOUT=1000", "DEBUG=1"}})
	wantError(t, s.call(3, "answer", queryArgs("slow one")), -32001, "answer failed", map[string]any{
		"message": "Request timed out after 1000 ms (request.timeout_ms)",
		"name":    answer.NameTimeoutError,
	})
	wantCount(t, srv, 1)
	if !srv.WaitCanceled(10 * time.Second) {
		t.Error("the fake did not see the timed-out request cancelled")
	}
}

// notifications/cancelled aborts the HTTP request at once and no response
// for that id is ever written; the session goes on.
func TestAnswerCancelled(t *testing.T) {
	srv := newFake(t, answertest.Slow(time.Minute, answertest.Respond(e2eModel, answertest.Message("too late"))))
	s := startAnswerGateway(t, srv, answerOpts{framed: true})
	s.Send(callMsg(7, "answer", queryArgs("cancel me")))
	if !srv.WaitRequests(1, testutil.DefaultTimeout) {
		t.Fatal("the call never reached the fake API")
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user cancelled"}}`)
	// Promptly: well before the fake's minute is up (generous for a loaded
	// machine, yet far from it).
	if !srv.WaitCanceled(10 * time.Second) {
		t.Fatal("the fake API did not see the request cancelled within 10s")
	}
	s.Send(pingMsg)
	if r := s.read(); idOf(r) != "99" || r["result"] == nil {
		t.Fatalf("after cancelling 7, the next reply is %v, want the ping's", r)
	}
	// Nothing else is ever written: close stdin and read to EOF.
	s.Stdin.Close()
	select {
	case <-s.EOF():
		// Only notifications may follow: the responses are initialize's
		// and the ping's, none for id 7.
		if r := s.Since(0, ""); len(r) != 2 {
			t.Errorf("the gateway wrote the responses %v; want only initialize's and the ping's (none for the cancelled id 7)", r)
		}
	case <-time.After(testutil.DefaultTimeout):
		s.Cmd.Process.Kill()
		t.Fatal("stdout not closed after stdin EOF")
	}
	wantCount(t, srv, 1)
}

// ---- errors before any request ----

func TestAnswerMissingKey(t *testing.T) {
	srv := newFake(t, answertest.Respond(e2eModel, answertest.Message("unreachable")))
	s := startAnswerGateway(t, srv, answerOpts{noKey: true})
	for i, tool := range []string{"answer", "answer_detailed", "answer_quick"} {
		wantError(t, s.call(3+i, tool, queryArgs("no key")), -32001, "answer failed",
			map[string]any{"message": "Missing API key: set OPENAI_API_KEY"})
	}
	wantCount(t, srv, 0)
}

// A missing, null, empty or blank query is -32602 "query is required" for
// every tool, no request is sent, and "undefined" appears nowhere.
func TestAnswerMissingQuery(t *testing.T) {
	srv := newFake(t, answertest.Respond(e2eModel, answertest.Message("unreachable")))
	s := startAnswerGateway(t, srv, answerOpts{framed: true, env: []string{"DEBUG=1"}})
	id := 3
	for _, tool := range []string{"answer", "answer_detailed", "answer_quick"} {
		for _, args := range []string{"", `{}`, `{"query":null}`, `{"query":""}`, `{"query":"   "}`, `{"recency_days":7}`} {
			reply := s.call(id, tool, args)
			id++
			wantError(t, reply, -32602, "query is required", map[string]any{"reason": "query is required"})
			if raw, _ := json.Marshal(reply); bytes.Contains(raw, []byte("undefined")) {
				t.Errorf("%s %s: reply mentions undefined: %s", tool, args, raw)
			}
		}
	}
	wantCount(t, srv, 0)
	if strings.Contains(s.Stderr.String(), "undefined") {
		t.Errorf("stderr mentions undefined:\n%s", s.Stderr)
	}
}

// ---- transport ----

// An invalid JSON line gets -32700 and does not block the answer call after
// it (the original stalled on it).
func TestAnswerAfterInvalidJSONLine(t *testing.T) {
	srv := newFake(t, answertest.Respond(e2eModel, answertest.Message("still here")))
	s := startAnswerGateway(t, srv, answerOpts{})
	s.send("{this is not json\n")
	if r := s.read(); errCode(r) != -32700 || idOf(r) != "null" {
		t.Fatalf("garbage line reply = %v, want -32700 with id null", r)
	}
	start := time.Now()
	wantResult(t, s.call(3, "answer", queryArgs("after garbage")), start, func(string) answer.Result {
		return answer.Result{Answer: "still here", Citations: []answer.Citation{}, Model: e2eModel}
	})
}

// ---- debug ----

// badRequest is a 400 whose message echoes the query and the key, as an API
// error body might.
func badRequest() answertest.Reply {
	return answertest.Error(http.StatusBadRequest, "invalid_request_error", "model_not_found",
		"The model does not exist. Input was: "+secretQuery+" key="+e2eKey+" \x1b]0;title\x07\x1b[2Jauth=Bearer abcdef123456")
}

// badRequestShown is badRequest's message as the client sees it: the key and
// the bearer token redacted, the escape sequences gone (the query is the
// client's own).
const badRequestShown = "The model does not exist. Input was: " + secretQuery + " key=[redacted] auth=Bearer [redacted]"

// DEBUG=false is off: error data has only message, and stderr has no debug
// lines (the original treated any non-empty DEBUG as on).
func TestAnswerDebugFalse(t *testing.T) {
	for _, v := range []string{"false", "0"} {
		t.Run("DEBUG="+v, func(t *testing.T) {
			srv := newFake(t, badRequest())
			s := startAnswerGateway(t, srv, answerOpts{framed: v == "false", env: []string{"DEBUG=" + v}})
			wantError(t, s.call(3, "answer", queryArgs(secretQuery)), -32001, "answer failed", map[string]any{
				"message": badRequestShown,
			})
			wantCount(t, srv, 1)
			s.stop()
			if errOut := s.Stderr.String(); strings.Contains(errOut, "DBG") || strings.Contains(errOut, "queryLen") {
				t.Errorf("DEBUG=%s wrote debug lines:\n%s", v, errOut)
			}
		})
	}
}

// DEBUG=1: error data adds status, type, code and name, and stderr has the
// debug lines the answer tools log, but never the key or the query text.
func TestAnswerDebugOn(t *testing.T) {
	srv := newFake(t, badRequest())
	s := startAnswerGateway(t, srv, answerOpts{env: []string{"DEBUG=1"}})
	wantError(t, s.call(3, "answer", queryArgs(secretQuery)), -32001, "answer failed", map[string]any{
		"message": badRequestShown,
		"status":  400,
		"type":    "invalid_request_error",
		"code":    "model_not_found",
		"name":    answer.NameAPIError,
	})
	wantCount(t, srv, 1)
	s.stop()
	errOut := s.Stderr.String()
	for _, want := range []string{"DBG", "tools/call", "argsKeys=", fmt.Sprintf("queryLen=%d", len([]rune(secretQuery))), "model=gpt-5.5", "request summary", "status=400"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("debug stderr lacks %q:\n%s", want, errOut)
		}
	}
	checkNoSecrets(t, "stderr", errOut)
}

// Across a retried, searched, successful call and a failing one with
// DEBUG=<file>, neither stderr nor the debug file holds the key or the
// query text.
func TestAnswerSecretsNeverLogged(t *testing.T) {
	srv := newFake(t,
		answertest.RateLimited(0),
		answertest.Respond(e2eModel,
			answertest.WebSearchCall(secretQuery, answertest.APISource("oai-weather")),
			answertest.Message("Sunny.")),
		badRequest(),
	)
	debugFile := filepath.Join(t.TempDir(), "debug.log")
	s := startAnswerGateway(t, srv, answerOpts{framed: true, env: []string{"DEBUG=" + debugFile}})
	if r := s.call(3, "answer", queryArgs(secretQuery)); r["error"] != nil {
		t.Fatalf("call failed: %v", r)
	}
	if r := s.call(4, "answer_detailed", `{"query":`+strconv.Quote(secretQuery)+`,"domains":["jma.go.jp"]}`); errCode(r) != -32001 {
		t.Fatalf("reply = %v, want -32001", r)
	}
	wantCount(t, srv, 3)
	s.stop()
	errOut := s.Stderr.String()
	if !strings.Contains(errOut, "DBG") {
		t.Errorf("DEBUG=<file> did not turn debug on:\n%s", errOut)
	}
	checkNoSecrets(t, "stderr", errOut)
	file, err := os.ReadFile(debugFile)
	if err != nil {
		t.Fatalf("debug file: %v", err)
	}
	if !strings.Contains(string(file), "request summary") {
		t.Errorf("debug file lacks the request summary:\n%s", file)
	}
	checkNoSecrets(t, "debug file", string(file))
}

func checkNoSecrets(t *testing.T, where, text string) {
	t.Helper()
	if strings.Contains(text, e2eKey) {
		t.Errorf("%s contains the API key:\n%s", where, text)
	}
	for _, part := range []string{secretQuery, "zebra-quokka-7731"} {
		if strings.Contains(text, part) {
			t.Errorf("%s contains the query text %q:\n%s", where, part, text)
		}
	}
}

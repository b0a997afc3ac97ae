package answer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/config"
)

func okReply() answertest.Reply { return answertest.Respond(testModel, answertest.Message("ok")) }

// ---- arguments ----

func TestBadArgumentsSendNothing(t *testing.T) {
	var many []string
	for i := range 101 {
		many = append(many, fmt.Sprintf(`"d%d.example"`, i))
	}
	manyDomains := `{"query":"x","domains":[` + strings.Join(many, ",") + `]}`
	for _, tc := range []struct{ tool, args, reason string }{
		{"answer", ``, "query is required"},
		{"answer", `null`, "query is required"},
		{"answer", `{}`, "query is required"},
		{"answer", `{"query":null}`, "query is required"},
		{"answer", `{"query":""}`, "query is required"},
		{"answer", `{"query":"   \n"}`, "query is required"},
		{"answer_quick", `{"recency_days":3}`, "query is required"},
		{"answer", `{"query":42}`, "query must be a string"},
		{"answer", `{"query":["a"]}`, "query must be a string"},
		{"answer", `[]`, "arguments must be a JSON object"},
		{"answer", `"what"`, "arguments must be a JSON object"},
		{"answer", `{"query":"x","recency_days":"7"}`, "recency_days must be a number"},
		{"answer", `{"query":"x","recency_days":-1}`, "recency_days must be a non-negative whole number"},
		{"answer_detailed", `{"query":"x","max_results":2.5}`, "max_results must be a non-negative whole number"},
		{"answer", `{"query":"x","domains":"a.com"}`, "domains must be an array of strings"},
		{"answer", `{"query":"x","domains":[1]}`, "domains must be an array of strings"},
		{"answer", manyDomains, "domains holds 101 domains; the search takes at most 100"},
		{"nope", `{"query":"x"}`, "unknown tool: nope"},
	} {
		f := newFixture(t, nil, okReply())
		_, err := f.call(t, tc.tool, tc.args)
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Reason != tc.reason {
			t.Errorf("%s %s: err = %v, want reason %q", tc.tool, tc.args, err, tc.reason)
		}
		if n := f.srv.Count(); n != 0 {
			t.Errorf("%s %s: %d requests sent, want 0", tc.tool, tc.args, n)
		}
	}
}

func TestNeverSendsUndefined(t *testing.T) {
	f := newFixture(t, nil, okReply(), okReply())
	_, _ = f.call(t, "answer", `{"q":"typo"}`)
	mustCall(t, f, "answer", `{"query":"real question"}`)
	for _, r := range f.srv.Requests() {
		if strings.Contains(string(r.Raw), "undefined") {
			t.Errorf("request body contains undefined: %s", r.Raw)
		}
	}
	if f.srv.Count() != 1 {
		t.Errorf("requests = %d, want 1", f.srv.Count())
	}
}

func TestMissingAPIKey(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) {
		c.APIKey = ""
		c.OpenAI.APIKeyEnv = "MY_OPENAI_KEY"
	}, okReply())
	_, err := f.call(t, "answer", `{"query":"hello"}`)
	ae := wantAPIError(t, err)
	if ae.Message != "Missing API key: set MY_OPENAI_KEY" || ae.Name != "ConfigError" {
		t.Errorf("err = %+v", ae)
	}
	if f.srv.Count() != 0 {
		t.Errorf("requests = %d, want 0", f.srv.Count())
	}
	f.cfg.OpenAI.APIKeyEnv = ""
	_, err = f.call(t, "answer", `{"query":"hello"}`)
	if ae := wantAPIError(t, err); ae.Message != "Missing API key: set OPENAI_API_KEY" {
		t.Errorf("err = %+v", ae)
	}
}

// ---- request body ----

func TestRequestBodyPerProfile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*config.Config)
		tool     string
		args     string
		want     string // expected subset of the body, JSON
		noFields []string
	}{
		{
			name: "answer defaults", tool: "answer", args: `{"query":"What is new in Go?"}`,
			want: `{"model":"gpt-5.5","input":"What is new in Go?\n[Hints] recency_days=60, max_results=5.",
				"tools":[{"type":"web_search"}],"include":["web_search_call.action.sources"],
				"reasoning":{"effort":"medium"},"text":{"verbosity":"medium"}}`,
		},
		{
			name: "answer args override defaults", tool: "answer",
			args: `{"query":"Go 1.26","recency_days":7,"max_results":3.0,"domains":["go.dev"," github.com ","","https://Go.dev/doc/","https://me@go.dev:443/x?y#z"]}`,
			want: `{"input":"Go 1.26\n[Hints] recency_days=7, max_results=3. domains: go.dev, github.com",
				"tools":[{"type":"web_search","filters":{"allowed_domains":["go.dev","github.com"]}}]}`,
		},
		{
			name: "config domains", tool: "answer", args: `{"query":"q"}`,
			edit: func(c *config.Config) {
				c.Search.Defaults = config.SearchDefaults{RecencyDays: 30, MaxResults: 8, Domains: []string{"jma.go.jp", "tenki.jp"}}
			},
			want: `{"input":"q\n[Hints] recency_days=30, max_results=8. domains: jma.go.jp, tenki.jp",
				"tools":[{"type":"web_search","filters":{"allowed_domains":["jma.go.jp","tenki.jp"]}}]}`,
		},
		{
			name: "explicit empty domains clear the defaults", tool: "answer", args: `{"query":"q","domains":[]}`,
			edit: func(c *config.Config) { c.Search.Defaults.Domains = []string{"jma.go.jp"} },
			want: `{"input":"q\n[Hints] recency_days=60, max_results=5.","tools":[{"type":"web_search"}]}`,
		},
		{
			name: "detailed inherits verbosity", tool: "answer_detailed", args: `{"query":"q"}`,
			want: `{"model":"gpt-5.5","reasoning":{"effort":"high"},"text":{"verbosity":"medium"}}`,
		},
		{
			name: "quick ignores search args", tool: "answer_quick", args: `{"query":"q","recency_days":1,"domains":["x.com"]}`,
			want: `{"model":"gpt-5.5","input":"q\n[Hints] recency_days=60, max_results=5.","tools":[{"type":"web_search"}],
				"reasoning":{"effort":"low"},"text":{"verbosity":"low"}}`,
		},
		{
			name: "o3 takes reasoning but not verbosity", tool: "answer_detailed", args: `{"query":"q"}`,
			edit: func(c *config.Config) {
				c.ModelProfiles["answer_detailed"] = config.Profile{Model: "o3", ReasoningEffort: "high", Verbosity: "high"}
			},
			want: `{"model":"o3","reasoning":{"effort":"high"}}`, noFields: []string{"text"},
		},
		{
			name: "o4-mini takes reasoning", tool: "answer_quick", args: `{"query":"q"}`,
			edit: func(c *config.Config) { c.ModelProfiles["answer_quick"] = config.Profile{Model: "o4-mini"} },
			want: `{"model":"o4-mini","reasoning":{"effort":"medium"}}`, noFields: []string{"text"},
		},
		{
			name: "gpt-4.1 takes neither", tool: "answer", args: `{"query":"q"}`,
			edit: func(c *config.Config) {
				c.ModelProfiles["answer"] = config.Profile{Model: "gpt-4.1", ReasoningEffort: "medium", Verbosity: "low"}
			},
			want: `{"model":"gpt-4.1"}`, noFields: []string{"text", "reasoning"},
		},
		{
			name: "empty effort and verbosity are not sent", tool: "answer", args: `{"query":"q"}`,
			edit: func(c *config.Config) { c.ModelProfiles["answer"] = config.Profile{Model: "gpt-5-mini"} },
			want: `{"model":"gpt-5-mini"}`, noFields: []string{"text", "reasoning"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *config.Config, _ *Options) {
				if tc.edit != nil {
					tc.edit(c)
				}
			}, okReply())
			mustCall(t, f, tc.tool, tc.args)
			reqs := f.srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %d", len(reqs))
			}
			body := reqs[0].Body
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			for k, w := range want {
				wb, _ := json.Marshal(w)
				gb, _ := json.Marshal(body[k])
				if string(wb) != string(gb) {
					t.Errorf("%s = %s, want %s", k, gb, wb)
				}
			}
			for _, k := range tc.noFields {
				if v, ok := body[k]; ok {
					t.Errorf("%s = %v, want absent", k, v)
				}
			}
			instr, _ := body["instructions"].(string)
			if instr != BuiltinPolicy(testNow) || !strings.Contains(instr, "Today's date (Asia/Tokyo): 2026-01-15.") {
				t.Errorf("instructions are not the builtin policy for %s", today)
			}
			if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q", got)
			}
			if reqs[0].Path != "/v1/responses" || reqs[0].Method != http.MethodPost {
				t.Errorf("request %s %s", reqs[0].Method, reqs[0].Path)
			}
		})
	}
}

func TestModelIsTheReportedOne(t *testing.T) {
	f := newFixture(t, nil, answertest.Respond("gpt-5.5-2026-03-05", answertest.Message("x")))
	if r := mustCall(t, f, "answer", `{"query":"q"}`); r.Model != "gpt-5.5-2026-03-05" {
		t.Errorf("model = %q", r.Model)
	}
	f = newFixture(t, nil, answertest.Respond("", answertest.Message("x")))
	if r := mustCall(t, f, "answer", `{"query":"q"}`); r.Model != "gpt-5.5" {
		t.Errorf("model without a reported one = %q, want the requested gpt-5.5", r.Model)
	}
}

func TestConfigWinsOverEnvironment(t *testing.T) {
	// openai.NewClient would take these; the Service must not.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-environment")
	t.Setenv("OPENAI_ORG_ID", "org-from-environment")
	f := newFixture(t, func(_ *config.Config, o *Options) { o.HTTPClient = nil }, okReply())
	mustCall(t, f, "answer", `{"query":"q"}`)
	if f.srv.Count() != 1 {
		t.Fatalf("requests to the configured base URL = %d, want 1", f.srv.Count())
	}
	h := f.srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer "+testKey || h.Get("OpenAI-Organization") != "" {
		t.Errorf("headers = %v", h)
	}
}

func TestBaseURLWithoutV1Suffix(t *testing.T) {
	// A base URL is used as given: a proxy mounted under /openai/v1 gets
	// /openai/v1/responses.
	var gotPath string
	srv := answertest.New()
	defer srv.Close()
	srv.HandleFunc(func(n int, r *answertest.Request) answertest.Reply {
		gotPath = r.Path
		return okReply()
	})
	cfg := config.Defaults()
	cfg.APIKey = testKey
	cfg.OpenAI.BaseURL = strings.TrimSuffix(srv.URL, "/v1") + "/openai/v1/"
	svc := New(Options{Config: cfg})
	_, _ = svc.Call(context.Background(), "answer", json.RawMessage(`{"query":"q"}`))
	if gotPath != "/openai/v1/responses" {
		t.Errorf("path = %q", gotPath)
	}
}

// ---- policy ----

func TestPolicyFile(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "cfg", "policy.md")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	builtin := BuiltinPolicy(testNow)
	for _, tc := range []struct{ merge, want string }{
		{"replace", "Custom policy."},
		{"", "Custom policy."},
		{"prepend", "Custom policy.\n\n" + builtin},
		{"append", builtin + "\n\nCustom policy."},
	} {
		t.Run("merge="+tc.merge, func(t *testing.T) {
			write("Custom policy.\n")
			f := newFixture(t, func(c *config.Config, o *Options) {
				c.Policy.System = config.SystemPolicy{Source: "file", Path: "~/cfg/policy.md", Merge: tc.merge}
				o.Home = home
			}, okReply(), okReply())
			mustCall(t, f, "answer", `{"query":"q"}`)
			if got := f.srv.Requests()[0].Body["instructions"]; got != tc.want {
				t.Errorf("instructions = %q\nwant %q", got, tc.want)
			}
			// Re-read on every call.
			write("Changed policy.")
			mustCall(t, f, "answer", `{"query":"q"}`)
			want := strings.ReplaceAll(tc.want, "Custom policy.", "Changed policy.")
			if got := f.srv.Requests()[1].Body["instructions"]; got != want {
				t.Errorf("after edit, instructions = %q\nwant %q", got, want)
			}
		})
	}
}

func TestPolicyFileUnreadable(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{"missing", filepath.Join(t.TempDir(), "nope.md")},
		{"directory", t.TempDir()},
		{"empty path", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *config.Config, o *Options) {
				c.Policy.System = config.SystemPolicy{Source: "file", Path: tc.path, Merge: "append"}
				o.Debug = false // the warning is logged without debug
			}, okReply())
			mustCall(t, f, "answer", `{"query":"q"}`)
			if got := f.srv.Requests()[0].Body["instructions"]; got != BuiltinPolicy(testNow) {
				t.Errorf("instructions = %q, want the builtin policy", got)
			}
			if logs := f.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "policy file") {
				t.Errorf("no warning logged: %s", logs)
			}
		})
	}
	// An empty file counts as unusable too.
	empty := filepath.Join(t.TempDir(), "empty.md")
	_ = os.WriteFile(empty, []byte(" \n"), 0o644)
	f := newFixture(t, func(c *config.Config, _ *Options) {
		c.Policy.System = config.SystemPolicy{Source: "file", Path: empty, Merge: "replace"}
	}, okReply())
	mustCall(t, f, "answer", `{"query":"q"}`)
	if got := f.srv.Requests()[0].Body["instructions"]; got != BuiltinPolicy(testNow) {
		t.Errorf("empty file: instructions = %q", got)
	}
}

// A policy file of maxPolicySize bytes is used; one byte more is refused
// with a warning that gives the bound, and the builtin policy is used.
func TestPolicyFileSizeBound(t *testing.T) {
	for _, tc := range []struct {
		size int
		used bool
	}{{maxPolicySize, true}, {maxPolicySize + 1, false}} {
		path := filepath.Join(t.TempDir(), "policy.md")
		if err := os.WriteFile(path, bytes.Repeat([]byte("x"), tc.size), 0o644); err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, func(c *config.Config, o *Options) {
			c.Policy.System = config.SystemPolicy{Source: "file", Path: path, Merge: "replace"}
			o.Debug = false
		}, okReply())
		mustCall(t, f, "answer", `{"query":"q"}`)
		got, _ := f.srv.Requests()[0].Body["instructions"].(string)
		if tc.used != (len(got) == tc.size) || !tc.used && got != BuiltinPolicy(testNow) {
			t.Errorf("%d bytes: instructions are %d bytes", tc.size, len(got))
		}
		if warned := strings.Contains(f.logs.String(), "larger than 1048576 bytes"); warned == tc.used {
			t.Errorf("%d bytes: warning logged = %v: %s", tc.size, warned, f.logs)
		}
	}
}

func TestBuiltinPolicyContent(t *testing.T) {
	p := BuiltinPolicy(testNow)
	for _, want := range []string{"web_search", "YYYY-MM-DD", "Asia/Tokyo", "language", "Sources:", "2026-01-15"} {
		if !strings.Contains(p, want) {
			t.Errorf("builtin policy lacks %q", want)
		}
	}
}

// ---- retries, timeouts, cancellation ----

func TestRetryThenSuccess(t *testing.T) {
	f := newFixture(t, nil,
		answertest.RateLimited(0),
		answertest.ServerError(503),
		answertest.Respond(testModel, answertest.Message("finally")),
	)
	r := mustCall(t, f, "answer", `{"query":"q"}`)
	if r.Answer != "finally" || f.srv.Count() != 3 {
		t.Errorf("answer %q after %d requests, want 3", r.Answer, f.srv.Count())
	}
}

func TestRetriesExhausted(t *testing.T) {
	for _, maxRetries := range []int{0, 1, 3} {
		var replies []answertest.Reply
		for range 10 {
			replies = append(replies, answertest.RateLimited(0))
		}
		f := newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = maxRetries }, replies...)
		_, err := f.call(t, "answer", `{"query":"q"}`)
		ae := wantAPIError(t, err)
		if got := f.srv.Count(); got != maxRetries+1 {
			t.Errorf("max_retries=%d: %d requests, want %d", maxRetries, got, maxRetries+1)
		}
		if ae.Status != 429 || ae.Name != "APIError" || ae.Code != "rate_limit_exceeded" || ae.Type != "requests" ||
			ae.Message != "Rate limit reached for requests. Please try again later." {
			t.Errorf("err = %+v", ae)
		}
	}
}

// An exhausted quota, or an answer that says not to retry, ends the call
// at the first attempt.
func TestNotRetried(t *testing.T) {
	for name, reply := range map[string]answertest.Reply{
		"insufficient_quota": answertest.Error(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"),
		"x-should-retry":     answertest.ErrorWithHeader(503, http.Header{"X-Should-Retry": {"false"}}, "server_error", "", "overloaded"),
	} {
		f := newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = 3 }, reply, okReply())
		_, err := f.call(t, "answer", `{"query":"q"}`)
		wantAPIError(t, err)
		if got := f.srv.Count(); got != 1 {
			t.Errorf("%s: %d requests, want 1", name, got)
		}
	}
}

func TestServerErrors(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = 2 },
		answertest.ServerError(500), answertest.ServerError(502), answertest.ServerError(500), okReply())
	_, err := f.call(t, "answer", `{"query":"q"}`)
	ae := wantAPIError(t, err)
	if f.srv.Count() != 3 || ae.Status != 500 || ae.Type != "server_error" ||
		!strings.HasPrefix(ae.Message, "The server had an error") {
		t.Errorf("%d requests, err = %+v", f.srv.Count(), ae)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	page := answertest.Raw(502, http.Header{"Content-Type": {"text/html"}, "Retry-After": {"0"}}, "<html>bad gateway</html>")
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = 1 }, page, page)
	_, err := f.call(t, "answer", `{"query":"q"}`)
	ae := wantAPIError(t, err)
	if f.srv.Count() != 2 || ae.Status != 502 || ae.Message != "HTTP 502 Bad Gateway" {
		t.Errorf("%d requests, err = %+v", f.srv.Count(), ae)
	}
	if !strings.Contains(f.logs.String(), "bad gateway") {
		t.Errorf("body excerpt not logged: %s", f.logs.String())
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		f := newFixture(t, nil,
			answertest.Error(status, "invalid_request_error", "bad_thing", "The thing is bad."), okReply())
		_, err := f.call(t, "answer", `{"query":"q"}`)
		ae := wantAPIError(t, err)
		if f.srv.Count() != 1 || ae.Status != status || ae.Message != "The thing is bad." || ae.Code != "bad_thing" {
			t.Errorf("status %d: %d requests, err = %+v", status, f.srv.Count(), ae)
		}
	}
}

func TestRetryableClientStatuses(t *testing.T) {
	for _, status := range []int{408, 409} {
		f := newFixture(t, nil, answertest.Error(status, "x", "", "try again"), okReply())
		mustCall(t, f, "answer", `{"query":"q"}`)
		if f.srv.Count() != 2 {
			t.Errorf("status %d: %d requests, want 2", status, f.srv.Count())
		}
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	f := newFixture(t, nil, answertest.Drop(), okReply())
	r := mustCall(t, f, "answer", `{"query":"q"}`)
	if r.Answer != "ok" || f.srv.Count() != 2 {
		t.Errorf("answer %q after %d requests", r.Answer, f.srv.Count())
	}
	f = newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = 1 }, answertest.Drop(), answertest.Drop())
	_, err := f.call(t, "answer", `{"query":"q"}`)
	if ae := wantAPIError(t, err); ae.Name != "ConnectionError" || f.srv.Count() != 2 {
		t.Errorf("%d requests, err = %+v", f.srv.Count(), ae)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := answertest.New()
	url := srv.URL
	srv.Close()
	cfg := config.Defaults()
	cfg.APIKey = testKey
	cfg.OpenAI.BaseURL = url
	cfg.Request.MaxRetries = 2
	svc := New(Options{Config: cfg})
	svc.retry = retryPolicy{base: time.Millisecond}
	_, err := svc.Call(context.Background(), "answer", json.RawMessage(`{"query":"q"}`))
	if ae := wantAPIError(t, err); ae.Name != "ConnectionError" || !strings.HasPrefix(ae.Message, "Connection error: ") {
		t.Errorf("err = %+v", ae)
	}
}

func TestMalformedBodyNotRetried(t *testing.T) {
	f := newFixture(t, nil, answertest.Malformed(), okReply())
	_, err := f.call(t, "answer", `{"query":"q"}`)
	ae := wantAPIError(t, err)
	if f.srv.Count() != 1 || ae.Name != "APIError" || !strings.HasPrefix(ae.Message, "Invalid response") {
		t.Errorf("%d requests, err = %+v", f.srv.Count(), ae)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	h := http.Header{"Retry-After-Ms": {"150"}}
	f := newFixture(t, nil, answertest.ErrorWithHeader(429, h, "requests", "rate_limit_exceeded", "slow down"), okReply())
	// Retried after the wait asked (measured on synctest's clock, to the
	// millisecond, in TestRetryWaits).
	mustCall(t, f, "answer", `{"query":"q"}`)
	if f.srv.Count() != 2 {
		t.Errorf("%d requests, want 2", f.srv.Count())
	}
	// A Retry-After beyond the limit ends the call with the error instead
	// of blocking it.
	// So does one too large for a time.Duration (it overflowed to a
	// negative wait, and the call was retried at once).
	for _, h := range []http.Header{
		{"Retry-After": {"3600"}}, {"Retry-After": {"1e300"}}, {"Retry-After": {"+Inf"}},
		{"Retry-After": {"9300000000"}}, {"Retry-After-Ms": {"1e20"}},
	} {
		f = newFixture(t, nil, answertest.ErrorWithHeader(429, h, "requests", "", "later"), okReply())
		_, err := f.call(t, "answer", `{"query":"q"}`)
		if ae := wantAPIError(t, err); ae.Status != 429 || f.srv.Count() != 1 {
			t.Errorf("%v: %d requests, err = %+v", h, f.srv.Count(), ae)
		}
	}
}

func TestTimeoutNotRetried(t *testing.T) {
	f := newFixture(t, func(c *config.Config, _ *Options) {
		// Long enough for the request to reach the server on a loaded
		// machine; the server answers after 10 s.
		c.Request.TimeoutMS = 500
		c.Request.MaxRetries = 3
	}, answertest.Slow(10*time.Second, okReply()), okReply())
	_, err := f.call(t, "answer", `{"query":"q"}`)
	ae := wantAPIError(t, err)
	// The attempt's timeout ended it, not the server's answer (10 s: that
	// would be a result). Not ctx's error: the caller's context is fine, only the attempt timed out.
	if ae.Name != "TimeoutError" || errors.Is(err, context.DeadlineExceeded) || ae.Message != "Request timed out after 500 ms (request.timeout_ms)" {
		t.Errorf("err = %+v", ae)
	}
	if f.srv.Count() != 1 {
		t.Errorf("%d requests, want exactly 1", f.srv.Count())
	}
	if !f.srv.WaitCanceled(5 * time.Second) {
		t.Error("server did not see the request abandoned")
	}
}

func TestCancellation(t *testing.T) {
	f := newFixture(t, nil, answertest.Hang(), okReply())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.Call(ctx, "answer", json.RawMessage(`{"query":"q"}`))
		done <- err
	}()
	f.srv.WaitRequests(1, 5*time.Second)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		var ae *APIError
		if errors.As(err, &ae) {
			t.Errorf("cancellation reported as APIError %+v", ae)
		}
	case <-time.After(30 * time.Second): // Hang never answers: only the cancellation ends it
		t.Fatal("Call did not return after cancel")
	}
	if !f.srv.WaitCanceled(2 * time.Second) {
		t.Error("server did not see the request context cancelled")
	}
	if f.srv.Count() != 1 {
		t.Errorf("%d requests, want 1 (no retry after cancel)", f.srv.Count())
	}
}

// ---- logs ----

func TestLogsNeverContainKeyOrQuery(t *testing.T) {
	const query = "What is the \"secret plan\" of ACME-7781 for 2026?" // quotes: JSON bodies escape them
	echo := "Invalid input '" + query + "' for key " + testKey
	f := newFixture(t, func(c *config.Config, _ *Options) { c.Request.MaxRetries = 1 },
		answertest.Respond(testModel,
			answertest.WebSearchCall(query, answertest.URLSource("https://acme.example/")),
			answertest.Message("Nobody knows.", answertest.URLCitation("https://acme.example/", "ACME")),
		),
		answertest.ErrorWithHeader(500, http.Header{"Retry-After": {"0"}}, "server_error", "", echo),
		answertest.Raw(502, http.Header{"Retry-After": {"0"}}, "<p>"+echo+"</p>"),
		answertest.Error(400, "invalid_request_error", "", echo),
	)
	args, _ := json.Marshal(map[string]any{"query": query, "domains": []string{"acme.example"}})
	mustCall(t, f, "answer", string(args))
	_, _ = f.call(t, "answer", string(args))
	_, _ = f.call(t, "answer_quick", string(args))
	logs := f.logs.String()
	for _, want := range []string{
		"tools/call", "name=answer", "argsKeys=\"[domains, query]\"", "queryLen=48",
		"profile=answer", "model=gpt-5.5", "supports=\"{verbosity:true, reasoning:true}\"",
		"request summary", "attempt=1", "status=500", "attempt=2", "status=502", "status=400", "body=",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q", want)
		}
	}
	for _, secret := range []string{query, testKey, "ACME-7781"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
	if len(f.srv.Requests()) != 4 {
		t.Errorf("requests = %d", len(f.srv.Requests()))
	}
}

func TestNoDebugLogsWithoutDebug(t *testing.T) {
	f := newFixture(t, func(_ *config.Config, o *Options) { o.Debug = false }, okReply())
	mustCall(t, f, "answer", `{"query":"q"}`)
	if logs := f.logs.String(); logs != "" {
		t.Errorf("logs without debug: %s", logs)
	}
}

func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.HandleFunc(func(n int, r *answertest.Request) answertest.Reply { return okReply() })
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := f.call(t, "answer", `{"query":"q"}`)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

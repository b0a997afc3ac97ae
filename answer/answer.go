// Package answer implements the built-in tools answer, answer_detailed and
// answer_quick: one call to the OpenAI Responses API with the web_search tool,
// turned into a cited JSON answer {"answer","used_search","citations","model"}.
//
// The endpoint and the key come only from the configuration
// (config.OpenAI.BaseURL and config.Config.APIKey); the process environment
// is never consulted. Retries happen in exactly one layer (this package's;
// openai-go's own are off): at most request.max_retries+1 requests per call.
package answer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Options configure a Service.
type Options struct {
	Config *config.Config // profiles, policy, search defaults, request limits, base URL, APIKey
	Logger *slog.Logger   // nil means no logs
	// Debug adds status/type/code/name to APIError data and enables debug logs.
	Debug bool
	// HTTPClient is used for the Responses API; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock for access dates; nil means time.Now.
	Now func() time.Time
	// Home is the directory "~" stands for in policy.system.path; "" means
	// the user's home directory (os.UserHomeDir).
	Home string
}

// Service answers queries. It is safe for concurrent use.
type Service struct {
	opts  Options
	retry retryPolicy // zero: production waits; tests shrink them
}

// New returns a Service. It does no I/O.
func New(opts Options) *Service { return &Service{opts: opts} }

// Result is the answer object: content[0].text carries it as JSON and
// structuredContent carries the same object.
type Result struct {
	Answer     string     `json:"answer"`
	UsedSearch bool       `json:"used_search"`
	Citations  []Citation `json:"citations"` // never nil
	Model      string     `json:"model"`     // the model id the API reported
}

// Citation is one source of an answer.
type Citation struct {
	URL         string `json:"url"` // a URL, or a source ID such as "oai-weather"
	Title       string `json:"title,omitempty"`
	PublishedAt string `json:"published_at"` // YYYY-MM-DD
}

// defaultBaseURL is used when the configuration has no base URL.
const defaultBaseURL = "https://api.openai.com/v1"

// Call runs the named tool with the raw JSON arguments of tools/call.
// Errors are *ArgumentError (bad or missing query: no request is sent),
// *APIError (the API failed, timed out, or the key is missing), or ctx's error
// when the call was cancelled.
//
// One call makes at most request.max_retries+1 HTTP requests, each bounded by
// request.timeout_ms; a timed-out or cancelled attempt is not retried, and
// cancelling ctx aborts the request in flight at once.
func (s *Service) Call(ctx context.Context, tool string, args json.RawMessage) (*Result, error) {
	return s.CallWith(ctx, tool, args, CallOptions{})
}

// CallOptions are optional settings of one call.
type CallOptions struct {
	// Step, when set, is told what the call is doing each time that
	// changes, for progress notifications: "asking gpt-5.5 (attempt 1 of
	// 4)", "waiting 2s to retry after HTTP 503". It never carries the
	// query. It must not block.
	Step func(string)
}

// CallWith is Call with options. An *APIError's message is made safe for
// the client (clientSafe).
func (s *Service) CallWith(ctx context.Context, tool string, args json.RawMessage, opts CallOptions) (*Result, error) {
	res, err := s.callWith(ctx, tool, args, opts)
	var ae *APIError
	if errors.As(err, &ae) {
		ae.Message = s.clientSafe(ae.Message)
	}
	return res, err
}

// clientSafe is an upstream message as the client may see it: an error body
// may quote the key (a 401's "Incorrect API key provided: …"), a bearer
// token or escape sequences; see docs/errors.md.
func (s *Service) clientSafe(msg string) string {
	var key string
	if s.opts.Config != nil {
		key = s.opts.Config.APIKey
	}
	return safetext.Strip(safetext.Redact(msg, key), false)
}

func (s *Service) callWith(ctx context.Context, tool string, args json.RawMessage, opts CallOptions) (*Result, error) {
	cfg := s.opts.Config
	if !IsTool(tool) {
		return nil, &ArgumentError{Reason: "unknown tool: " + tool}
	}
	if cfg == nil {
		return nil, &APIError{Message: "answer tools are not configured", Name: NameConfigError}
	}
	a, err := parseArgs(tool, args, cfg.Search.Defaults)
	if err != nil {
		s.debug("tools/call rejected", "name", tool, "reason", err.(*ArgumentError).Reason)
		return nil, err
	}
	s.debug("tools/call", "name", tool, "argsKeys", "["+strings.Join(a.Keys, ", ")+"]", "queryLen", len([]rune(a.Query)))

	if cfg.APIKey == "" {
		env := cfg.OpenAI.APIKeyEnv
		if env == "" {
			env = "OPENAI_API_KEY"
		}
		return nil, &APIError{Message: "Missing API key: set " + env, Name: NameConfigError}
	}
	profile := cfg.Profile(tool)
	if profile.Model == "" {
		return nil, &APIError{Message: "No model configured: set model_profiles.answer.model", Name: NameConfigError}
	}
	s.debug("answer", "profile", tool, "model", profile.Model,
		"supports", fmt.Sprintf("{verbosity:%t, reasoning:%t}", supportsVerbosity(profile.Model), supportsReasoning(profile.Model)))

	instructions, from := s.instructions()
	params := buildParams(profile, instructions, a)
	s.debug(summary(params, from, a))

	baseURL := strings.TrimSpace(cfg.OpenAI.BaseURL)
	if baseURL == "" {
		baseURL = defaultBaseURL
	}
	hc := s.opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	// NewResponseService, unlike openai.NewClient, reads nothing from the
	// environment: the endpoint and key are the configuration's alone.
	svc := responses.NewResponseService(
		option.WithBaseURL(baseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the one retry layer is send's
	)
	start := s.now()
	step := opts.Step
	if step == nil {
		step = func(string) {}
	}
	resp, err := s.send(ctx, &svc, params, a.Query, profile.Model, step)
	if err != nil {
		return nil, err
	}
	if resp.Status == responses.ResponseStatusFailed {
		msg := strings.TrimSpace(resp.Error.Message)
		if msg == "" {
			msg = "The response failed"
		}
		s.debug("response failed", "code", string(resp.Error.Code), "msg", s.redact(msg, a.Query))
		return nil, &APIError{Message: msg, Code: string(resp.Error.Code), Name: NameAPIError}
	}
	if resp.Status == responses.ResponseStatusIncomplete {
		// Cut short (max_output_tokens, content_filter): a half answer
		// would read as a whole one.
		reason := cmp.Or(string(resp.IncompleteDetails.Reason), "unknown")
		s.debug("response incomplete", "reason", reason)
		return nil, &APIError{Message: "The response is incomplete (" + reason + ")", Code: "incomplete", Name: NameAPIError}
	}
	res, err := parseResponse([]byte(resp.RawJSON()), s.now(), cfg.Policy.MaxCitations, profile.Model)
	if errors.Is(err, errNoAnswer) {
		return nil, &APIError{Message: "The response holds no answer text", Name: NameAPIError}
	}
	if err != nil {
		return nil, &APIError{Message: "Invalid response from the Responses API: " + err.Error(), Name: NameAPIError, Err: err}
	}
	s.debug("response", "model", res.Model, "status", string(resp.Status), "outputItems", len(resp.Output),
		"used_search", res.UsedSearch, "citations", len(res.Citations), "answerLen", len([]rune(res.Answer)),
		"elapsed", s.now().Sub(start).Round(time.Millisecond))
	return res, nil
}

// CallToolResult wraps r as an MCP tool result: content[0].text is r as JSON
// written without HTML escaping, and structuredContent is the same object
// (a json.RawMessage of the same bytes).
func CallToolResult(r *Result) *mcp.CallToolResult {
	b := marshal(r)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// marshal encodes r as JSON without HTML escaping and without a trailing
// newline. A nil Citations slice is written as [].
func marshal(r *Result) []byte {
	v := *r
	if v.Citations == nil {
		v.Citations = []Citation{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// A Result holds only strings and a bool: it always encodes.
		panic("answer: encode result: " + err.Error())
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func (s *Service) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.opts.Logger != nil {
		return s.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// debug logs at debug level when Options.Debug is set. Callers never pass
// the query text, the instructions or the key.
func (s *Service) debug(msg string, args ...any) {
	if !s.opts.Debug || s.opts.Logger == nil {
		return
	}
	s.opts.Logger.Debug(msg, args...)
}

// redact removes the API key and the query from text bound for a log (an
// error body may echo either), then terminal control and anything that
// looks like a token; the caller truncates what it returns, never before.
// Queries shorter than 4 characters are too common as substrings to redact.
func (s *Service) redact(text, query string) string {
	if s.opts.Config != nil && s.opts.Config.APIKey != "" {
		text = strings.ReplaceAll(text, s.opts.Config.APIKey, "[redacted key]")
	}
	q := strings.TrimSpace(query)
	if len([]rune(q)) < 4 {
		return safetext.Redact(safetext.Strip(text, false))
	}
	// As written, and as a JSON body may quote it: Go's escaping, and the
	// \uXXXX escaping of every non-ASCII character (Python's ensure_ascii).
	forms := []string{q, asciiJSON(q, "%04x"), asciiJSON(q, "%04X")}
	if b, err := json.Marshal(q); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	for _, f := range forms {
		text = strings.ReplaceAll(text, f, "[redacted query]")
	}
	// Strip makes a line break a space, in the text and in the query alike.
	text = safetext.Strip(text, false)
	if sq := strings.TrimSpace(safetext.Strip(q, false)); len([]rune(sq)) >= 4 {
		text = strings.ReplaceAll(text, sq, "[redacted query]")
	}
	return safetext.Redact(text)
}

// asciiJSON is s as the inside of a JSON string whose every non-ASCII
// character is a \u escape with hex digits in format.
func asciiJSON(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7f && r <= 0xffff:
			fmt.Fprintf(&b, `\u`+format, r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u`+format+`\u`+format, hi, lo)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

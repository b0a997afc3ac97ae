// Package answer implements the built-in tools answer, answer_detailed and
// answer_quick: one call to the OpenAI Responses API with the web_search tool,
// turned into a cited JSON answer {"answer","used_search","citations","model"}.
package answer

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Service.
type Options struct {
	Config *config.Config // profiles, policy, search defaults, request limits, base URL, APIKey
	Logger *slog.Logger
	// Debug adds status/type/code/name to APIError data and enables debug logs.
	Debug bool
	// HTTPClient is used for the Responses API; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock for access dates; nil means time.Now.
	Now func() time.Time
}

// Service answers queries. It is safe for concurrent use.
type Service struct{ opts Options }

// New returns a Service. It does no I/O.
func New(opts Options) *Service { return &Service{opts: opts} }

// Tools returns the three tool definitions exactly as seed 001 §3.1 gives
// them (names, descriptions, input schemas), each with an outputSchema for
// Result.
func (s *Service) Tools() []*mcp.Tool { panic("TODO(answer helper)") }

// Result is the answer object: content[0].text carries it as JSON and
// structuredContent carries the same object.
type Result struct {
	Answer     string     `json:"answer"`
	UsedSearch bool       `json:"used_search"`
	Citations  []Citation `json:"citations"`
	Model      string     `json:"model"`
}

// Citation is one source of an answer.
type Citation struct {
	URL         string `json:"url"` // a URL, or a source ID such as "oai-weather"
	Title       string `json:"title,omitempty"`
	PublishedAt string `json:"published_at"` // YYYY-MM-DD
}

// Call runs the named tool with the raw JSON arguments of tools/call.
// Errors are *ArgumentError (bad or missing query: no request is sent),
// *APIError (the API failed, timed out, or the key is missing), or ctx's error
// when the call was cancelled.
func (s *Service) Call(ctx context.Context, tool string, args json.RawMessage) (*Result, error) {
	panic("TODO(answer helper)")
}

// CallToolResult wraps r as an MCP tool result: content[0].text is r as JSON
// written without HTML escaping, and structuredContent is the same object.
func CallToolResult(r *Result) *mcp.CallToolResult { panic("TODO(answer helper)") }

// ArgumentError reports invalid tool arguments; it maps to -32602 with
// data.reason = Reason.
type ArgumentError struct{ Reason string }

func (e *ArgumentError) Error() string { return "invalid arguments: " + e.Reason }

// APIError reports a failed answer; it maps to -32001 "answer failed" with
// data.message = Message and, in debug mode, status/type/code/name.
type APIError struct {
	Message string // the API's own message (or "Missing API key: set OPENAI_API_KEY")
	Status  int    // HTTP status, 0 when none
	Type    string // API error type
	Code    string // API error code
	Name    string // error class: "APIError", "TimeoutError", "ConnectionError", "ConfigError"
	Err     error  // the underlying error, if any
}

func (e *APIError) Error() string { return "answer failed: " + e.Message }
func (e *APIError) Unwrap() error { return e.Err }

// Package backends starts the backend MCP servers declared in the
// configuration, supervises them, and forwards requests to them.
//
// Each stdio backend is a child process in its own process group, spoken to
// with a small JSON-RPC client of this package rather than the go-sdk client:
// a proxy must pass results through byte for byte (structuredContent with
// 19-digit integers, unknown content types, _meta), survive banner lines on a
// child's stdout, and see a crash the moment it happens.
package backends

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the MCP version the gateway asks backends for.
const ProtocolVersion = "2025-11-25"

// Options configure a Manager.
type Options struct {
	Servers []config.Server // enabled and disabled; disabled ones are reported but not started
	Logger  *slog.Logger
	// DefaultTimeout is the per-call timeout for servers without timeout_ms.
	DefaultTimeout time.Duration
	// StartupTimeout bounds Wait and each backend's initialize handshake.
	StartupTimeout time.Duration
	// Environ is the gateway's environment that children inherit (before
	// their own env); nil means os.Environ().
	Environ []string
	// ClientInfo is sent in initialize; nil means mcp-gateway with an empty version.
	ClientInfo *mcp.Implementation

	// OnChange is called (from its own goroutine, never with a lock held)
	// after a backend's tools, prompts or resources changed: it became
	// ready, crashed, stopped, or sent a list_changed notification that was
	// refreshed.
	OnChange func(server string)
	// OnRequest handles a server-to-client request of a backend (sampling,
	// elicitation, roots/list) and returns the raw result. Nil, or an error,
	// answers the backend with a JSON-RPC error.
	OnRequest func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error)
}

// State is a backend's supervision state.
type State string

const (
	Starting   State = "starting"
	Ready      State = "ready"
	Crashed    State = "crashed"
	Restarting State = "restarting"
	Failed     State = "failed" // could not start, or gave up restarting
	Stopped    State = "stopped"
	Disabled   State = "disabled" // enabled: false
)

// Status describes one backend for `mcp-gateway status` and GET /status.
type Status struct {
	Name       string              `json:"name"`
	State      State               `json:"state"`
	PID        int                 `json:"pid,omitempty"`
	StartedAt  time.Time           `json:"started_at,omitzero"`
	Tools      int                 `json:"tools"`
	Restarts   int                 `json:"restarts"`
	Error      string              `json:"error,omitempty"`
	StderrTail []string            `json:"stderr_tail,omitempty"`
	ServerInfo *mcp.Implementation `json:"server_info,omitempty"`
}

// Tool is one tool of a ready backend, after the server's include/exclude
// filter.
type Tool struct {
	Server string          // the backend's configured name
	Name   string          // the backend's own tool name
	Raw    json.RawMessage // the tool object exactly as the backend listed it
}

// Prompt is one prompt of a ready backend.
type Prompt struct {
	Server string
	Name   string
	Raw    json.RawMessage
}

// Resource is one resource (or resource template, when Template is true) of
// a ready backend; URI is the uri (or uriTemplate).
type Resource struct {
	Server   string
	URI      string
	Template bool
	Raw      json.RawMessage
}

// CallOptions are optional per-call settings.
type CallOptions struct {
	// Progress, when set, asks the backend for progress (a fresh token of the
	// gateway's own is put in _meta) and receives each notification's params
	// with ProgressToken left nil; the caller puts the client's token back.
	Progress func(*mcp.ProgressNotificationParams)
	// Meta is the client's _meta for the request (progressToken removed);
	// it is forwarded as is.
	Meta map[string]any
}

// Manager owns every backend. Its methods are safe for concurrent use.
type Manager struct{ opts Options }

// New returns a Manager. It starts nothing.
func New(opts Options) *Manager { return &Manager{opts: opts} }

// Start starts every enabled backend in parallel and returns at once.
// ctx bounds the backends' lifetime only as far as Close is concerned: the
// children are stopped by Close (or die with the gateway process).
func (m *Manager) Start(ctx context.Context) { panic("TODO(backends helper)") }

// Wait blocks until every enabled backend is ready or has failed, the
// startup timeout passes, or ctx is done.
func (m *Manager) Wait(ctx context.Context) { panic("TODO(backends helper)") }

// Tools returns the tools of every ready backend, in configuration order and
// then the backend's own order.
func (m *Manager) Tools() []Tool { panic("TODO(backends helper)") }

// Prompts returns the prompts of every ready backend.
func (m *Manager) Prompts() []Prompt { panic("TODO(backends helper)") }

// Resources returns the resources and resource templates of every ready backend.
func (m *Manager) Resources() []Resource { panic("TODO(backends helper)") }

// CallTool calls a backend's tool with the client's raw arguments and
// returns the backend's raw result (the JSON-RPC "result" member, byte for
// byte). The call is bounded by the server's timeout; on timeout the backend
// is sent notifications/cancelled and a *TimeoutError is returned at the
// deadline. When ctx is cancelled the backend is sent notifications/cancelled
// and ctx's error is returned. Errors: *ServerError, *TimeoutError, *RPCError.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	panic("TODO(backends helper)")
}

// Request forwards any other request (prompts/get, resources/read,
// completion/complete, ...) to a backend with the same timeout and
// cancellation rules as CallTool, and returns the raw result.
func (m *Manager) Request(ctx context.Context, server, method string, params any, opts CallOptions) (json.RawMessage, error) {
	panic("TODO(backends helper)")
}

// Status returns every configured backend's status, in configuration order.
func (m *Manager) Status() []Status { panic("TODO(backends helper)") }

// Close stops every backend: close its stdin, then SIGTERM its process
// group, then SIGKILL the group, and reaps it. It waits for all of them and
// is safe to call more than once.
func (m *Manager) Close() error { panic("TODO(backends helper)") }

// ServerError reports a backend that is not running, crashed, or failed to
// start. The gateway maps it to -32000 with data {server, state, reason,
// stderr_tail}.
type ServerError struct {
	Server     string
	State      State
	Reason     string   // "exit status 3", the start error, "stopped", ...
	StderrTail []string // the last lines the backend wrote to stderr
}

func (e *ServerError) Error() string {
	if e.State == Crashed {
		return "MCP server '" + e.Server + "' crashed: " + e.Reason
	}
	return "MCP server '" + e.Server + "' is not running"
}

// TimeoutError reports a call that hit its deadline. The gateway maps it to
// -32001 with data {server, tool, timeout_ms, reason: "timeout"}.
type TimeoutError struct {
	Server  string
	Method  string // "tools/call", "prompts/get", ...
	Name    string // the backend's own tool (or prompt) name, if any
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return "MCP server '" + e.Server + "' " + e.Method + " timed out after " + e.Timeout.String()
}

// RPCError is a JSON-RPC error returned by a backend; the gateway forwards
// its code, message and data, adding "server" to data.
type RPCError struct {
	Server  string
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string { return "MCP server '" + e.Server + "': " + e.Message }

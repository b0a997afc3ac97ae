// Package backends starts the backend MCP servers declared in the
// configuration, supervises them, and forwards requests to them.
//
// Each stdio backend is a child process in its own process group (a Job
// Object on Windows; see docs/platforms.md), spoken to
// with a small JSON-RPC client of this package rather than the go-sdk client:
// a proxy must pass results through byte for byte (structuredContent with
// 19-digit integers, unknown content types, _meta), survive banner lines on a
// child's stdout, and see a crash the moment it happens.
//
// Supervision: a backend that crashes, or fails to start, is restarted
// (restart: on-failure) after 1 s, doubling to 30 s, until 5 failures fall
// within 60 s (Failed); under restart: never it stays Crashed (Failed when
// its first start failed). A start may take up to Options.StartLimit; the
// startup timeout only bounds how long the first lists wait for it.
//
// The scriptable MCP server in ./testbackend is the test double for this
// package and for the gateway's tests; its flags are documented in its
// main.go.
package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/sandbox"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the MCP version the gateway asks backends of the
// handshake era for.
const protocolVersion = "2025-11-25"

// Options configure a Manager.
type Options struct {
	Servers []config.Server // enabled and disabled; disabled ones are reported but not started
	Logger  *slog.Logger
	// DefaultTimeout is the per-call timeout for servers without timeout_ms;
	// zero means config.DefaultCallTimeout.
	DefaultTimeout time.Duration
	// StartupTimeout bounds Wait and WaitServer, counted from Start (or
	// from SetClientCapabilities, with AwaitClient): how long a first list
	// waits for backends still starting. It stops the waiting, not the
	// backend. Zero means config.DefaultStartupTimeout.
	StartupTimeout time.Duration
	// StartLimit bounds each start of a backend (process, initialize and
	// the first lists); a start that takes longer fails. Zero means
	// config.DefaultStartLimit (10 min),
	// enough for a first `npx -y` download.
	StartLimit time.Duration
	// Environ is the gateway's environment that children inherit (before
	// their own env); nil means os.Environ().
	Environ []string
	// ClientInfo is sent in initialize; nil means mcp-gateway with an empty version.
	ClientInfo *mcp.Implementation

	// AwaitClient makes each backend wait, once its process has started,
	// for SetClientCapabilities before it is initialized, so that it is
	// declared the client's own capabilities (client.go). Wait's startup
	// timeout then counts from that call.
	AwaitClient bool
	// Reaper is the command of the reaper helper, a process that runs
	// RunReaper on its stdin, e.g. {os.Executable(), "__reaper"}; nil means
	// none. Started once by Start, it SIGKILLs the backends' process groups
	// (grandchildren included) when the gateway dies, even by SIGKILL.
	// Ignored on Windows, where each backend's Job Object does that.
	Reaper []string
	// Subreaper makes the gateway process the child subreaper of its
	// descendants (Linux; ignored elsewhere): a backend's descendant that
	// left its process group and whose parent died is re-parented to the
	// gateway, and Close ends every such orphan still alive. Set it only in
	// a process that starts no other children of its own (the command, not
	// a test binary).
	Subreaper bool
	// MaxCallerSessions bounds the sessions a server with upstream_auth
	// keeps, one per caller (the least recently used is closed first);
	// CallerIdle closes one unused that long. Zero means
	// DefaultMaxCallerSessions and DefaultCallerIdle.
	MaxCallerSessions int
	CallerIdle        time.Duration

	// Sandbox is the command of the sandbox mode, e.g. {os.Executable(),
	// SandboxArg}: a server whose sandbox is on runs as that command
	// with its plan, which confines itself and executes the server
	// (docs/sandbox.md). nil confines nothing: enforce refuses to start
	// such a server, best_effort says so.
	Sandbox []string
	// SandboxDir holds each confined server's state directory (its HOME
	// and TMPDIR), SandboxDir/NAME; "" gives it none (HOME as it is).
	SandboxDir string
	// Protected are the gateway's own files and directories (config, pin
	// file, snapshots, audit log, token store), which no sandbox grants.
	Protected []string
	// LandlockABI, when set, reports the Landlock ABI instead of the
	// kernel: the tests simulate a kernel without Landlock with 0.
	LandlockABI func() int
	// NoCgroupJoin makes and limits each confined server's cgroup but
	// leaves the server out of it: the tests of memory_mb and processes
	// show with it that they fail without the join.
	NoCgroupJoin bool

	// TokenDir is where the OAuth sign-ins of remote servers are kept, one
	// file per server (mcp-gateway login writes them); "" means remote
	// servers get no OAuth.
	TokenDir string
	// UserLogins are the per-person sign-ins of per_user_login servers
	// (userlogin.go); nil where there are no callers to sign in (anything
	// but the HTTP front with OAuth): such a server refuses every request.
	UserLogins *UserLogins
	// Authorize, when set, lets the gateway sign in to a remote server that
	// asks for it: it takes the user (or a headless agent) to the
	// authorization URL and returns the code the authorization server
	// redirected to RedirectURL with. Without it, a server that needs
	// sign-in is NeedsLogin until a sign-in is stored in TokenDir.
	Authorize   auth.AuthorizationCodeFetcher
	RedirectURL string

	// SnapshotDir is where each backend's snapshot is kept: what it
	// looked like when last ready, shown to clients during its first
	// start (snapshot.go); "" keeps none.
	SnapshotDir string

	// Trust configures the trust layer: pinned definitions, withheld
	// changes, the definition scanner (trust.go, docs/trust.md). The zero
	// value trusts every definition.
	Trust TrustOptions

	// Dial, when set, connects each server to a peer in this process
	// instead of starting its command or reaching its URL (dial.go): the
	// seam of the tests that script the gateway's wire behaviour under
	// testing/synctest, where no process can run. The product leaves it
	// nil.
	Dial DialFunc

	// Secret, when set, gives the value of a secret that a server's
	// configuration refers to (${secret:NAME}, docs/secrets.md), or why
	// there is none: looked up when the server starts, for that server
	// only, and by Apply, which restarts a server whose secrets changed.
	// nil: a server that refers to a secret does not start.
	Secret func(name string) (string, error)

	// Self, when set, is this gateway: an enabled server that would run it
	// again (Self.Match's Loop) is not started but reported as Skipped, and
	// every child inherits config.ChainEnv (Self.Environ), so that a nested gateway
	// reached through a wrapper can tell it is a recursion.
	Self *config.Self
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
	Disabled   State = "disabled"    // enabled: false
	Skipped    State = "skipped"     // would run this gateway again (Options.Self, CodeRecursive)
	NeedsLogin State = "needs_login" // a remote server that needs sign-in: mcp-gateway login NAME
)

// Status describes one backend for `mcp-gateway status` and GET /status.
type Status struct {
	Name      string    `json:"name"`
	State     State     `json:"state"`
	PID       int       `json:"pid,omitempty"`
	URL       string    `json:"url,omitempty"` // a remote server's, its password and query secrets masked
	StartedAt time.Time `json:"started_at,omitzero"`
	Tools     int       `json:"tools"`
	// Snapshot: the backend is starting, and Tools and ServerInfo are
	// what it was when last ready (in an earlier run).
	Snapshot bool `json:"snapshot,omitempty"`
	Restarts int  `json:"restarts"`
	// Trust is the server's trust policy (pin, approve, off); Withheld
	// how many of its definitions the trust layer withholds (Changes).
	Trust      string              `json:"trust,omitempty"`
	Withheld   int                 `json:"withheld,omitempty"`
	Error      string              `json:"error,omitempty"`
	StderrTail []string            `json:"stderr_tail,omitempty"`
	ServerInfo *mcp.Implementation `json:"server_info,omitempty"`
	// Protocol is the revision the gateway speaks with the backend:
	// 2026-07-28 after server/discover, else what initialize agreed.
	Protocol string `json:"protocol,omitempty"`
	// Sandbox is the server's confinement as applied at its last start;
	// nil when its sandbox is off (or it has not started).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// From and FileSHA256 are the entry's provenance as the configuration
	// records it (`from: registry NAME@VERSION`, the package file's
	// digest), for status and the dashboard.
	From       string `json:"from,omitempty"`
	FileSHA256 string `json:"file_sha256,omitempty"`
}

// Tool is one tool of a ready backend, after the server's include/exclude
// filter.
type Tool struct {
	Server string          // the backend's configured name
	Name   string          // the backend's own tool name
	Raw    json.RawMessage // the tool object exactly as the backend listed it
	// Snapshot marks a tool shown from its server's snapshot while the
	// server starts: not what the server lists now, so no call may be
	// decided by it (snapshot.go).
	Snapshot bool
	def      *defInfo // its digest and scan, when its server is trusted (trust.go)
}

// Prompt is one prompt of a ready backend.
type Prompt struct {
	Server string
	Name   string
	Raw    json.RawMessage
	def    *defInfo
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
	// It is called in order from the backend's read loop, never after the
	// call returned, and must not block.
	Progress func(*mcp.ProgressNotificationParams)
	// Meta is the client's _meta for the request (progressToken removed);
	// it is forwarded as is.
	Meta map[string]any
	// Task is a tools/call's params.task, as the client wrote it; nil for
	// a call that is not task-augmented.
	Task json.RawMessage
	// Unbounded lifts the server's call timeout (tasks/result, which waits
	// for a task to end).
	Unbounded bool
	// ClientCaps, for a backend of the per-request era, are the capabilities
	// of the client the call is for (compact JSON; nil: the ones the
	// backends are told, Manager.SetClientCapabilities).
	ClientCaps json.RawMessage
	// Extra are members of a tools/call's params beyond name, arguments,
	// task and _meta, as the client wrote them (a retry's inputResponses
	// and requestState), forwarded as they are: an object, or nil.
	Extra json.RawMessage
	// Caller is the person the request is made for (the HTTP front's
	// authenticated caller); nil for none. A server with upstream_auth is
	// reached with the caller's own credential on the caller's own
	// session, and refuses a request without one (upstream.go).
	Caller *Caller
	// Batch lets StartToolCall leave the request in a buffer until
	// Manager.FlushWrites, or until 64 KiB wait, so that a caller starting
	// many calls in a row (a burst of client requests) writes them to each
	// backend at once; FlushWrites then writes to just the backends that
	// hold some.
	Batch bool
}

// CancelFunc ends a call started without waiting and sends the backend
// notifications/cancelled with reason (a JSON value, passed as the client
// wrote it; nil sends none). After the call ended it does nothing.
type CancelFunc func(reason json.RawMessage)

// Cancelled is the cause of a context cancelled on a client's behalf
// (context.WithCancelCause): a call waiting on that context sends the
// backend the client's own reason (a JSON value; nil for none).
type Cancelled struct{ Reason json.RawMessage }

func (e *Cancelled) Error() string { return "cancelled by the client" }

// CancelReason is the reason sent to the backend.
func (e *Cancelled) CancelReason() json.RawMessage { return e.Reason }

// ServerError reports a backend that is not running, crashed, or failed to
// start. The gateway maps it to -32000 with data {server, state, reason,
// stderr_tail}.
// NotListedError is a call of a tool its server does not list: one the
// server's tools filter leaves out, or one its live list lacks (a name a
// snapshot showed while it started, or one guessed from its prefix). The
// call is never forwarded; the gateway answers it as a name nothing has.
type NotListedError struct {
	Server string
	Tool   string // the backend's own name
}

func (e *NotListedError) Error() string {
	return fmt.Sprintf("MCP server '%s' lists no tool '%s'", e.Server, e.Tool)
}

type ServerError struct {
	Server     string
	State      State
	Reason     string   // "exit status 3", the start error, "stopped", ...
	StderrTail []string // the last lines the backend wrote to stderr
}

func (e *ServerError) Error() string {
	switch e.State {
	case Crashed:
		if sandbox.IsMemoryExceeded(e.Reason) {
			return "MCP server '" + e.Server + "' " + e.Reason // "exceeded its memory limit (512 MB)"
		}
		return "MCP server '" + e.Server + "' crashed: " + e.Reason
	case NeedsLogin:
		if e.Reason != "" {
			return "MCP server '" + e.Server + "' " + e.Reason // an oauth.LoginError's message
		}
		return "MCP server '" + e.Server + "' " + (&oauth.LoginError{Server: e.Server}).Error()
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
	// Starting: the backend was still starting when the time ran out; the
	// request was never sent.
	Starting bool
}

func (e *TimeoutError) Error() string {
	s := "MCP server '" + e.Server + "' " + e.Method + " timed out after " + e.Timeout.String()
	if e.Starting {
		s += " (the server is still starting)"
	}
	return s
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

// CodeRecursive is the JSON-RPC error code with which a gateway that found
// itself in its chain answers initialize. The parent gateway reports the
// entry as Skipped instead of Failed and does not retry it.
const CodeRecursive = -32090

// TokenPath is the file in which server's sign-in is kept under dir.
func TokenPath(dir, server string) string { return oauth.TokenPath(dir, server) }

// Logout forgets server's sign-in under dir; it reports whether there was one.
func Logout(dir, server string) (bool, error) { return oauth.Logout(dir, server) }

// Hooks are how a Manager tells the client side above it (the gateway)
// what its backends do and ask. They are set once, before Start
// (SetHooks); any may be nil.
type Hooks struct {
	// Changed is called (from its own goroutine, never with a lock held)
	// after a backend's tools, prompts or resources changed: it became
	// ready, crashed, stopped, or sent a list_changed notification that was
	// refreshed.
	Changed func(server string)
	// CallerChanged is Changed for the lists of one caller's own session
	// of a server reached per caller (upstream.go): caller is its
	// Caller.Subject, and only that caller's lists (ToolsFor and the
	// like) changed. Nil: Changed is called instead.
	CallerChanged func(server, caller string)
	// Request handles a server-to-client request of a backend (sampling,
	// elicitation, roots/list) and returns the raw result. Nil, or an error,
	// answers the backend with a JSON-RPC error.
	// It runs in its own goroutine, with a ctx that is cancelled when the
	// backend cancels the request or its session ends; it must return then.
	// An error that is a *RPCError or a go-sdk *jsonrpc.Error keeps its code;
	// any other error is answered with -32603. When Request is set the
	// gateway declares the roots, sampling and elicitation capabilities to
	// its backends.
	Request func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error)
	// Notification is called with each notifications/message (also
	// logged), notifications/resources/updated and
	// notifications/tasks/status a backend sends, from the backend's read
	// loop: it must not wait long.
	Notification func(server, method string, params json.RawMessage)
}

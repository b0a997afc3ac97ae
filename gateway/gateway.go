// Package gateway is mcp-gateway's front end: the MCP server a client talks
// to. It lists the answer tools and every backend's tools, prompts and
// resources as one server, routes each request to where it belongs, and
// maps every failure to one JSON-RPC error (errors.go).
//
// A Gateway is shared by all client connections; each connection gets its
// own front and session (front.go, session.go), because names depend on
// the client (gateway.strict_names: auto).
package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Gateway.
type Options struct {
	Config *config.Config
	Logger *slog.Logger
	// Answer serves the answer tools; nil (or gateway.answer_tools: false)
	// hides them.
	Answer *answer.Service
	// Backends are the backend servers; nil means none (New puts an
	// empty Manager in its place).
	Backends *backends.Manager
	// Version is reported as serverInfo.version.
	Version string
	// OnCall, if set, is told of every finished tools/call (metrics). It
	// runs on the call path: it must be fast and must not block.
	OnCall func(CallRecord)
	// Audit, if set, records every finished tools/call (the audit log)
	// before the client is sent its result. A call whose record it cannot
	// write fails (fail closed): no call is answered unrecorded.
	Audit func(CallRecord) error
	// ProgressInterval is how often an answer tool called with a
	// progressToken reports progress; zero means 5 s.
	ProgressInterval time.Duration
	// StateKey seals the requestState of calls the gateway holds for
	// input (hold.go), and the ids of HTTP sessions of the handshake era
	// (sessionseal.go): replicas behind one load balancer share it
	// (gateway.http.state_key_env); nil means a key of this process's own,
	// and sessions of this process's own. It may hold several keys
	// separated by commas: the first seals, each opens (rotation).
	StateKey []byte
	// Policy decides what each HTTP client sees and may call, by the
	// principal its requests carry (WithPrincipal); nil, or a client
	// without a principal, sees everything.
	Policy *policy.Policy
	// OnDeny, if set, is told of every request the policy refused. It
	// runs on the request's path: it must not block.
	OnDeny func(Denial)
	// OnLimited, if set, is told of every request a rate limit refused:
	// the limit ("identity" or "tool") and the tool's backend.
	OnLimited func(limit, server string)
	// Tracer, if set, traces every request and the backend requests made
	// for it (trace.go); nil traces nothing.
	Tracer trace.Tracer
}

// Gateway routes MCP requests from clients to the answer tools and the
// backends. Its methods are safe for concurrent use.
type Gateway struct {
	opts Options
	log  *slog.Logger
	// serverInfoJSON is serverInfo encoded, for the _meta of every result
	// of the per-request era.
	serverInfoJSON json.RawMessage

	// prefix maps each configured server to its prefix; SetServers
	// replaces it when the configuration is reloaded.
	prefix atomic.Pointer[map[string]string]
	// servers are the configured servers, replaced with prefix: what the
	// REST API knows of them (rest.go).
	servers atomic.Pointer[[]config.Server]

	mu     sync.Mutex
	fronts map[*front]bool
	// unaskable counts, by server, the backend calls in flight for callers
	// that cannot be asked anything (Call: REST, mcp-gateway call).
	unaskable map[string]int

	logs  *ratelimit.Keyed // backends' log messages forwarded to clients
	tasks taskOwners       // the tasks sessionless HTTP requests created (tasks.go)

	routesMu sync.Mutex
	routes   map[namer]*toolTable // toolRoutes' last result per naming (namers)
	// callerRoutes is toolRoutesFor's last result per naming and caller
	// (callerroutes.go), at most maxCallerTables of them.
	callerRoutes map[callerRouteKey]*toolTable

	profiles   map[string]*policy.Decision // gateway.profiles, by name
	limits     *limiter                    // gateway.rate_limits
	toolScopes []toolScope                 // gateway.http.oauth.tool_scopes
	sealer     *sealer                     // seals the requestState of held calls
	holds      holds                       // the calls held for a per-request client's input (hold.go)
	scriptRuns scriptRuns                  // the runs of run_script under way (scriptruns.go)
}

// SetServers records the servers of a reloaded configuration (their
// prefixes); call it before backends.Manager.Apply, so that the new
// backends' tools get their names. The other settings of Options.Config
// cannot change while the gateway runs.
func (g *Gateway) SetServers(servers []config.Server) {
	m := make(map[string]string, len(servers))
	for _, s := range servers {
		m[s.Name] = s.Prefix
	}
	g.servers.Store(&servers)
	g.prefix.Store(&m)
}

// New returns a Gateway. It does no I/O; the backends are started by their
// owner.
func New(opts Options) *Gateway {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Config == nil {
		opts.Config = config.Defaults()
	}
	if !opts.Config.Gateway.AnswerTools {
		opts.Answer = nil
	}
	if opts.Backends == nil {
		// No servers: an empty Manager, which starts nothing, so that
		// no caller asks whether there are backends.
		opts.Backends = backends.New(backends.Options{Logger: log})
	}
	g := &Gateway{opts: opts, log: log, fronts: make(map[*front]bool), logs: ratelimit.NewKeyed(logLimit), sealer: newStateSealer(opts.StateKey),
		routes: make(map[namer]*toolTable), callerRoutes: make(map[callerRouteKey]*toolTable)}
	g.serverInfoJSON, _ = json.Marshal(g.serverInfo())
	g.profiles = newProfiles(opts.Config.Gateway.Profiles, log)
	g.limits = newLimiter(opts.Config.Gateway.RateLimits)
	g.toolScopes = newToolScopes(opts.Config.Gateway.HTTP.OAuth.ToolScopes)
	g.SetServers(opts.Config.Servers)
	opts.Backends.SetHooks(backends.Hooks{
		Changed:       g.backendsChanged,
		CallerChanged: g.callerChanged,
		Request:       g.handleBackendRequest,
		Notification:  g.backendNotification,
	})
	return g
}

// readIdle is what the backends' read loops flush at the end of each
// burst (backends.Manager.ReadIdle).
func (g *Gateway) readIdle() *flush.Set { return g.opts.Backends.ReadIdle() }

// ServeStdio serves one client on r and w (the process's stdin and stdout)
// until r ends, the client goes away, or ctx is done. At the end of input
// the calls already read are still answered (for up to 30 s). It does not
// close r or w.
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	f := g.newFront(frontOptions{pipe: true})
	c := stdio.New(r, w, stdio.Options{LineMode: g.opts.Config.Gateway.LineMode, Logger: g.log, Describe: describeMessage})
	return g.serveFront(ctx, f, newStdioStream(c, g.readIdle(), g.log))
}

// Serve serves one client on an MCP transport until the session ends or
// ctx is done. Its messages take the same path as ServeStdio's, but ids are
// only as exact as go-sdk's message types keep them; ServeStdio keeps them
// byte for byte.
func (g *Gateway) Serve(ctx context.Context, t mcp.Transport) error {
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	return g.serve(ctx, &sdkStream{ctx: ctx, conn: conn})
}

// serve runs a session on one client stream.
func (g *Gateway) serve(ctx context.Context, cs clientStream) error {
	return g.serveOn(ctx, cs, "")
}

// serveOn serves a session on cs until its input ends (and the calls read
// are answered), the client is gone, or ctx is done. A session with a
// version serves one HTTP request on its own (sessionless): it starts as if
// initialized at that version, since it carries no handshake of its own,
// and is told of nothing after it.
func (g *Gateway) serveOn(ctx context.Context, cs clientStream, version string) error {
	return g.serveFront(ctx, g.newFront(frontOptions{version: version}), cs)
}

// serveFront is serveOn with the front made (newFront), which it drops at
// the end. The front serves the principal of ctx (WithPrincipal).
func (g *Gateway) serveFront(ctx context.Context, f *front, cs clientStream) error {
	defer g.dropFront(f)
	f.setCaller(ctx)
	s := newSession(f, cs)
	g.mu.Lock()
	f.stream = cs
	f.sess = s
	g.mu.Unlock()
	read := make(chan struct{})
	go func() {
		defer close(read)
		s.readLoop()
	}()
	select {
	case <-read:
	case <-ctx.Done():
	case <-s.gone.ch:
	}
	s.close()
	select {
	case <-read:
		if err := s.readErr; err != io.EOF && ctx.Err() == nil {
			return err
		}
	default: // the reader exits when its Read returns
	}
	return nil
}

// backendsChanged refreshes every client's lists after a backend's tools,
// prompts or resources changed; clients get list_changed notifications.
// It is the backends.Hooks.Changed hook.
func (g *Gateway) backendsChanged(server string) {
	g.log.Debug("backend lists changed", "server", server)
	for _, f := range g.frontList() {
		f.rebuild(context.Background(), ifBuilt)
	}
}

// callerChanged refreshes the lists of the clients of one caller after
// that caller's own session of server (reached per caller) changed its
// lists; nobody else's lists have it. It is the
// backends.Hooks.CallerChanged hook.
func (g *Gateway) callerChanged(server, caller string) {
	g.log.Debug("a caller's own lists changed", "server", server)
	for _, f := range g.frontList() {
		if up := f.upstream(); up != nil && up.Subject == caller {
			f.rebuild(context.Background(), ifBuilt)
		}
	}
}

func (g *Gateway) frontList() []*front {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*front, 0, len(g.fronts))
	for f := range g.fronts {
		out = append(out, f)
	}
	return out
}

// newFront makes a front and registers it: from then on other goroutines
// (backendsChanged, broadcasts) reach it, so what o fixes is set first.
func (g *Gateway) newFront(o frontOptions) *front {
	f := &front{g: g, log: g.log, pipe: o.pipe, unaskable: o.unaskable, sessionless: o.version != "", sealed: o.sealed, issuer: o.issuer}
	f.decl.Store(&declared{version: o.version, client: o.client, naming: g.namer(false)})
	f.initialized.Store(f.sessionless)
	if o.declared != nil {
		f.decl.Store(o.declared)
		f.initialized.Store(true)
	}
	g.mu.Lock()
	g.fronts[f] = true
	g.mu.Unlock()
	return f
}

func (g *Gateway) dropFront(f *front) {
	g.mu.Lock()
	delete(g.fronts, f)
	g.mu.Unlock()
}

// waitFirstStarts is all a client's initialize and first lists wait for:
// the backends never seen before, within gateway.first_start_wait_ms. The
// others are shown as their snapshots say until they are ready, and any
// difference reaches the client by list_changed.
// up is the caller: their own sessions of the servers reached per caller,
// which no snapshot shows, are waited for too (upstream.go).
func (g *Gateway) waitFirstStarts(ctx context.Context, up *backends.Caller) {
	g.opts.Backends.WaitUnseen(ctx, g.opts.Config.FirstStartWait())
	g.opts.Backends.Attach(ctx, up, g.opts.Config.FirstStartWait())
}

// lazy reports whether tools/list names the meta tools instead of the
// backends' tools (gateway.tools_mode: lazy): then neither initialize nor
// tools/list waits for any backend, and find_tools does the waiting.
func (g *Gateway) lazy() bool { return g.opts.Config.Gateway.ToolsMode == "lazy" }

// Package gateway is mcp-gateway's front end: the MCP server a client talks
// to. It lists the answer tools and every backend's tools, prompts and
// resources as one server, routes each request to where it belongs, and
// maps every failure to one JSON-RPC error (errors.go).
//
// A Gateway is shared by all client connections; each connection gets its
// own front (one mcp.Server), because names depend on the client
// (gateway.strict_names: auto).
package gateway

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Gateway.
type Options struct {
	Config *config.Config
	Logger *slog.Logger
	// Answer serves the answer tools; nil (or gateway.answer_tools: false)
	// hides them.
	Answer *answer.Service
	// Backends are the backend servers; nil means none.
	Backends *backends.Manager
	// Version is reported as serverInfo.version.
	Version string
	// OnCall, if set, is told of every finished tools/call (metrics). It
	// runs on the call path: it must be fast and must not block.
	OnCall func(CallRecord)
	// ProgressInterval is how often an answer tool called with a
	// progressToken reports progress; zero means 5 s.
	ProgressInterval time.Duration
}

// Gateway routes MCP requests from clients to the answer tools and the
// backends. Its methods are safe for concurrent use.
type Gateway struct {
	opts Options
	log  *slog.Logger

	// prefix maps each configured server to its prefix; SetServers
	// replaces it when the configuration is reloaded.
	prefix atomic.Pointer[map[string]string]

	mu     sync.Mutex
	fronts map[*front]bool

	logs  *ratelimit.Keyed // backends' log messages forwarded to clients
	tasks taskOwners       // the tasks stateless HTTP requests created (tasks.go)

	routesMu sync.Mutex
	routes   [2]*toolTable // toolRoutes' last result per naming mode (plain, strict)
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
	g := &Gateway{opts: opts, log: log, fronts: make(map[*front]bool), logs: ratelimit.NewKeyed(logLimit)}
	g.SetServers(opts.Config.Servers)
	if opts.Backends != nil {
		opts.Backends.OnReadIdle(g.flushClients)
	}
	return g
}

// flushClients writes the responses the backends' read loops buffered
// (backends.Manager.OnReadIdle): one write per burst, not per response.
func (g *Gateway) flushClients() {
	g.mu.Lock()
	var streams []clientStream
	for f := range g.fronts {
		if f.stream != nil {
			streams = append(streams, f.stream)
		}
	}
	g.mu.Unlock()
	for _, s := range streams {
		if err := s.Flush(); err != nil {
			g.log.Debug("flush to client", "err", err)
		}
	}
}

// ServeStdio serves one client on r and w (the process's stdin and stdout)
// until r ends, the client goes away, or ctx is done. At the end of input
// the calls already read are still answered (for up to 30 s). It does not
// close r or w.
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return g.serve(ctx, stdio.New(r, w, stdio.Options{LineMode: g.opts.Config.Gateway.LineMode, Logger: g.log, Describe: describeMessage}))
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

// serve runs a session on one client stream: go-sdk handles what the
// session passes on.
func (g *Gateway) serve(ctx context.Context, cs clientStream) error {
	return g.serveState(ctx, cs, nil)
}

// serveState is serve for a session that starts in a known state: a
// stateless HTTP request is served as if initialize had happened (state's
// InitializeParams), since it carries none of its own.
func (g *Gateway) serveState(ctx context.Context, cs clientStream, state *mcp.ServerSessionState) error {
	f := g.newFront()
	defer g.dropFront(f)
	if state != nil && state.InitializeParams != nil {
		f.identify(nil, state.InitializeParams)
		f.stateless = true
	}
	s := newSession(f, cs)
	g.mu.Lock()
	f.stream = cs
	f.sess = s
	g.mu.Unlock()
	go s.readLoop()
	err := f.run(ctx, sdkTransport{s}, state)
	s.close()
	if err == io.EOF || ctx.Err() != nil {
		return nil
	}
	return err
}

// run is mcp.Server.Run with a session state.
func (f *front) run(ctx context.Context, t mcp.Transport, state *mcp.ServerSessionState) error {
	ss, err := f.server.Connect(ctx, t, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return err
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}

// BackendsChanged refreshes every client's lists after a backend's tools,
// prompts or resources changed; clients get list_changed notifications.
// It is the backends.Options.OnChange hook.
func (g *Gateway) BackendsChanged(server string) {
	g.log.Debug("backend lists changed", "server", server)
	for _, f := range g.frontList() {
		f.refresh()
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

func (g *Gateway) newFront() *front {
	f := &front{g: g, log: g.log}
	f.server = mcp.NewServer(&mcp.Implementation{Name: "mcp-gateway", Version: g.opts.Version}, &mcp.ServerOptions{
		Logger:                    g.sdkLogger(),
		SupportedProtocolVersions: servedVersions(),
		SubscribeHandler:          f.subscribe,
		UnsubscribeHandler:        f.unsubscribe,
		// Backends may add tools, prompts and resources at any time, so
		// all three are declared up front, with list_changed.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			// Served by the session (completion.go).
			Completions: &mcp.CompletionCapabilities{},
			// Proxied to and from the backends (logging.go).
			Logging: &mcp.LoggingCapabilities{}, //lint:ignore SA1019 current in the versions the gateway serves (docs/transparency.md)
		},
	})
	f.server.AddReceivingMiddleware(f.route)
	f.server.AddSendingMiddleware(f.notify)
	g.mu.Lock()
	g.fronts[f] = true
	g.mu.Unlock()
	return f
}

// sdkLogger is the go-sdk's logger: its session lifecycle lines are noise
// at info level, so only its warnings and errors pass unless debug is on.
func (g *Gateway) sdkLogger() *slog.Logger {
	l := g.log.With("component", "mcp")
	if g.opts.Config.Server.Debug {
		return l
	}
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

func (g *Gateway) dropFront(f *front) {
	g.mu.Lock()
	delete(g.fronts, f)
	g.mu.Unlock()
}

// waitBackends blocks until every backend has settled (bounded by the
// startup timeout inside Manager.Wait).
func (g *Gateway) waitBackends(ctx context.Context) {
	if g.opts.Backends != nil {
		g.opts.Backends.Wait(ctx)
	}
}

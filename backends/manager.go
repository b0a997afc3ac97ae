package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/sandbox"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/trust"
	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Manager owns every backend. Its methods are safe for concurrent use.
type Manager struct {
	opts           Options
	log            *slog.Logger
	environ        []string
	startupTimeout time.Duration
	startLimit     time.Duration
	// client is the client's capabilities (SetClientCapabilities);
	// clientSet is closed when they are set.
	client     atomic.Pointer[clientCaps]
	clientSet  chan struct{}
	clientOnce sync.Once
	// set is the current backends; Apply swaps it whole, so readers (the
	// call path among them) take no lock.
	set    atomic.Pointer[backendSet]
	tokens atomic.Int64 // progress tokens
	// listGen counts, per list (tools, prompts, resources), the times a
	// backend said its list changed and it was fetched again
	// (ListGenerations).
	listGen  [3]atomic.Uint64
	logLevel atomic.Pointer[string] // the clients' logging/setLevel, if any
	hooks    Hooks                  // set before Start, read-only after
	trust    *trustState            // the trust layer (trust.go)

	// held is the backends that hold requests back for FlushWrites;
	// readIdle the writers above that hold back what a read loop gave them
	// (ReadIdle). Each has just the ones that hold something (flush.Set).
	held, readIdle flush.Set
	// params are the buffers a tools/call's params are built in
	// (toolParams): free again once the call's request is sent.
	params rpcconn.Buffers

	// Supervision tunables; New sets the documented values, tests shorten them.
	backoffBase, backoffMax time.Duration // restart delay: base doubling to max
	crashWindow             time.Duration // crashes counted within this window...
	maxCrashes              int           // ...this many give up (Failed)
	stopGrace               time.Duration // each of Close's two polite waits
	// now is the clock callers' credentials expire by (upstream.go).
	now func() time.Time

	applyMu sync.Mutex // one Apply at a time

	mu        sync.Mutex
	started   bool
	closed    bool
	startedAt time.Time
	cancel    context.CancelFunc
	runCtx    context.Context // parent of every supervisor's context
	notify    *notifier       // nil without Hooks.Changed or before Start
	reaper    *proc.Reaper    // nil without Options.Reaper
	// cgroups makes the servers' cgroups for their memory and process
	// limits, found at the first that asks for one.
	cgroups func() *sandbox.Cgroups

	wg        sync.WaitGroup // supervisors
	closeOnce sync.Once
}

// New returns a Manager. It starts nothing.
func New(opts Options) *Manager {
	m := &Manager{
		opts:           opts,
		log:            opts.Logger,
		environ:        opts.Environ,
		startupTimeout: opts.StartupTimeout,
		startLimit:     opts.StartLimit,
		backoffBase:    time.Second,
		backoffMax:     30 * time.Second,
		crashWindow:    60 * time.Second,
		maxCrashes:     5,
		stopGrace:      2 * time.Second,
		now:            time.Now,
		cgroups:        sync.OnceValue(sandbox.FindCgroups),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.environ == nil {
		m.environ = os.Environ()
	}
	if opts.Self != nil {
		m.environ = opts.Self.Environ(m.environ)
	}
	if m.startupTimeout <= 0 {
		m.startupTimeout = config.DefaultStartupTimeout
	}
	if m.startLimit <= 0 {
		m.startLimit = config.DefaultStartLimit
	}
	m.clientSet = make(chan struct{})
	m.trust = newTrustState(m, opts.Trust, m.log)
	set := &backendSet{byName: make(map[string]*backend)}
	for _, s := range opts.Servers {
		set.add(m.newBackend(s))
	}
	m.set.Store(set)
	return m
}

// backendSet is one configuration's backends; it is never modified once
// stored in Manager.set.
type backendSet struct {
	list   []*backend // configuration order
	byName map[string]*backend
	// perCaller: some server is reached per caller (upstream.go), whose
	// lists differ by caller (ToolsFor).
	perCaller bool
}

func (s *backendSet) add(b *backend) {
	s.list = append(s.list, b)
	s.byName[b.cfg.Name] = b
	s.perCaller = s.perCaller || b.pool != nil
}

func (m *Manager) backends() []*backend { return m.set.Load().list }

// newBackend returns the backend of one configured server, not started.
func (m *Manager) newBackend(s config.Server) *backend {
	b := m.bareBackend(s)
	if s.UpstreamAuth.Mode != "" && s.URL != "" {
		src, err := m.sourceFor(s)
		b.pool = newCallerPool(b, src, err)
	} else {
		b.auth = oauth.New(s, oauth.Options{TokenDir: m.opts.TokenDir, Timeout: config.CallTimeout(s, m.opts.DefaultTimeout), Authorize: m.opts.Authorize, RedirectURL: m.opts.RedirectURL}, m.log)
	}
	if !s.Enabled {
		b.state, b.reason = Disabled, "disabled"
		b.settle()
	} else if m.opts.Self != nil {
		if match := m.opts.Self.Match(s); match.Loop {
			b.state, b.reason, b.skipped = Skipped, match.Reason(), true
			b.settle()
			m.log.Warn("not starting a server that would run this gateway again", "server", s.Name, "config", match.Config)
		}
	}
	if !b.settledYet() && b.pool == nil {
		b.readSnapshot()
	}
	return b
}

// bareBackend returns a backend of s with its channels and its log, and
// nothing of its own: no sign-in, no snapshot.
func (m *Manager) bareBackend(s config.Server) *backend {
	b := &backend{
		m:       m,
		cfg:     s,
		timeout: config.CallTimeout(s, m.opts.DefaultTimeout),
		logs:    ratelimit.New(logLimit),
		settled: make(chan struct{}),
		moved:   make(chan struct{}),
		refresh: make(chan struct{}, 1),
		done:    make(chan struct{}),
		state:   Stopped,
		reason:  "not started",
	}
	// Everything logged of the server masks the values of its secrets
	// (secrets.go): its stdout, its notifications/message, its errors.
	b.log = slog.New(secretHandler{m.log.With("server", s.Name).Handler(), &b.values})
	return b
}

// startLocked starts b's supervisor under the Manager's run context;
// m.mu is held.
func (m *Manager) startLocked(b *backend) {
	if !b.cfg.Enabled || b.skipped {
		b.began = time.Now()
		close(b.done)
		return
	}
	if b.pool != nil {
		m.startPool(b)
		return
	}
	ctx, cancel := context.WithCancel(m.runCtx)
	b.stop, b.began = cancel, time.Now()
	b.mu.Lock()
	b.setStateLocked(Starting, "")
	b.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(b.done)
		defer cancel()
		b.run(ctx)
	}()
}

// Start starts every enabled backend in parallel and returns at once;
// given only, it starts the servers only names alone (a one-shot command
// that needs one): every other one is Stopped, "not started", and no wait
// waits for it. ctx bounds the backends' lifetime only as far as Close is
// concerned: the children are stopped by Close (or die with the gateway
// process), not by ctx's cancellation. Start does nothing after the first
// call or after Close.
func (m *Manager) Start(ctx context.Context, only ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	m.startedAt = time.Now()
	if h := m.hooks; h.Changed != nil {
		m.notify = newNotifier(func(c listChange) {
			if c.caller != "" && h.CallerChanged != nil {
				h.CallerChanged(c.server, c.caller)
				return
			}
			h.Changed(c.server)
		})
	}
	if m.opts.Subreaper {
		if err := proc.BecomeSubreaper(); err != nil {
			m.log.Warn("backends' descendants that leave their process group may outlive the gateway", "err", err)
		}
	}
	if len(m.opts.Reaper) > 0 {
		r, err := proc.StartReaper(m.opts.Reaper, m.environ, m.log)
		if err != nil {
			m.log.Warn("backends' own children may outlive a killed gateway", "err", err)
		}
		m.reaper = r
	}
	m.runCtx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.trust.start()
	for _, b := range m.backends() {
		if len(only) == 0 || slices.Contains(only, b.cfg.Name) {
			m.startLocked(b)
			continue
		}
		b.began = time.Now()
		close(b.done)
		b.settle()
	}
}

// Wait blocks until every enabled backend is ready or has failed (its first
// start attempt has concluded), or ctx is done, or — when within is not
// zero — within has passed since the backend could begin to start (Start,
// the Apply that added it, or the client's capabilities with AwaitClient).
// A backend whose start limit ends by then is waited for until its start
// has concluded, so that it is never reported as starting at the moment
// its start times out. It returns at once if Start was not called.
func (m *Manager) Wait(ctx context.Context, within time.Duration) {
	m.wait(ctx, within, func(*backend) bool { return true })
}

// WaitUnseen is Wait for the backends never seen before, those without a
// snapshot: what a client's initialize and first lists wait for, briefly
// (gateway.first_start_wait_ms), since the others are shown as their
// snapshots say. It is always bounded: within <= 0 waits for none.
func (m *Manager) WaitUnseen(ctx context.Context, within time.Duration) {
	if within > 0 {
		m.wait(ctx, within, func(b *backend) bool { return b.snap == nil || b.snapshotShowsNoTool() })
	}
}

func (m *Manager) wait(ctx context.Context, within time.Duration, which func(*backend) bool) {
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if !started {
		return
	}
	for _, b := range m.backends() {
		// A wait that ran out goes on to the others, whose time has run
		// out too unless they began later (waitSettled marks them seen).
		if which(b) && !m.waitSettled(ctx, b, within) && ctx.Err() != nil {
			return
		}
	}
}

// WaitServer blocks until server is ready or its first start has
// concluded, the startup timeout since it could begin passes, or ctx is
// done: how long a call by a name nobody lists yet waits for the server
// the name belongs to. It returns at once for an unknown server or before
// Start.
func (m *Manager) WaitServer(ctx context.Context, server string) {
	b := m.set.Load().byName[server]
	if b == nil {
		return
	}
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if started {
		m.waitSettled(ctx, b, m.startupTimeout)
	}
}

// settleGrace is how long after its start limit a backend's start may take
// to conclude (its supervisor tears the attempt down).
const settleGrace = time.Second

// waitSettled waits for b's first start to conclude, at most within (zero:
// no bound) after it could begin — or, when b's start limit ends about
// then or before (within settleGrace), until its start has timed out and
// been torn down. It reports false when the wait ended without the start
// concluding.
func (m *Manager) waitSettled(ctx context.Context, b *backend, within time.Duration) bool {
	var expired <-chan time.Time
	if within > 0 {
		m.mu.Lock()
		since := m.waitFrom(b.began) // began: Start, or the Apply that added it
		deadline := since.Add(within)
		// The start limit counts from the client's initialize too when the
		// backend waited for it (client.go).
		if limit := since.Add(m.startLimit); limit.Before(deadline.Add(settleGrace)) {
			deadline = later(deadline, limit.Add(settleGrace))
		}
		m.mu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-b.settled:
		return true
	case <-expired:
		b.markSeen()
	case <-ctx.Done():
	}
	return false
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Tools returns the tools of every ready backend, in configuration order and
// then the backend's own order, as nobody in particular is shown them
// (ToolsFor). The Raw bytes are shared: don't modify them.
func (m *Manager) Tools() []Tool { return m.ToolsFor(nil) }

// Prompts returns the prompts of every ready backend (PromptsFor nobody).
func (m *Manager) Prompts() []Prompt { return m.PromptsFor(nil) }

// Resources returns the resources and resource templates of every ready
// backend (ResourcesFor nobody).
func (m *Manager) Resources() []Resource { return m.ResourcesFor(nil) }

// ListMeta returns the _meta of each ready backend's result of a list
// method (tools/list, prompts/list, resources/list,
// resources/templates/list), in configuration order; backends whose result
// had none are left out. It is ListMetaFor nobody.
func (m *Manager) ListMeta(method string) []json.RawMessage { return m.ListMetaFor(method, nil) }

// ListGenerations counts, per list — tools, prompts, resources — the
// times a backend said its list changed and it was fetched again, even if
// it came back the same: a client of the per-request era listening for
// changes is told of each, as by the server directly. A caller's own
// session's lists (ToolsFor) are not counted: they are that caller's.
func (m *Manager) ListGenerations() [3]uint64 {
	return [3]uint64{m.listGen[0].Load(), m.listGen[1].Load(), m.listGen[2].Load()}
}

// ListHints returns the cache hint of each backend's result of a list
// method, for every backend clients are shown (one that said nothing, or
// is shown from its snapshot, has a hint that is not Set), in
// configuration order. It is ListHintsFor nobody.
func (m *Manager) ListHints(method string) []CacheHint { return m.ListHintsFor(method, nil) }

// CallTool calls a backend's tool with the client's raw arguments and
// returns the backend's raw result (the JSON-RPC "result" member, byte for
// byte). The call is bounded by the server's timeout; on timeout the backend
// is sent notifications/cancelled and a *TimeoutError is returned at the
// deadline. When ctx is cancelled the backend is sent notifications/cancelled
// and ctx's error is returned. Errors: *ServerError, *TimeoutError, *RPCError.
// args must be a JSON object (or empty, and then no arguments are sent).
// It is StartToolCall, waited for.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	return rpcconn.Await(ctx, func(done func(json.RawMessage, error)) func(json.RawMessage) {
		return m.StartToolCall(server, tool, args, opts, done)
	})
}

// Request forwards any other request (prompts/get, resources/read,
// completion/complete, ...) to a backend with the same timeout and
// cancellation rules as CallTool, and returns the raw result. params may be
// nil, a json.RawMessage, or anything encoding/json marshals to an object.
//
// A backend still starting is waited for, within the request's timeout
// (the rest of which the request then has); one whose start failed fails
// the request at once with its error.
func (m *Manager) Request(ctx context.Context, server, method string, params any, opts CallOptions) (json.RawMessage, error) {
	b := m.set.Load().byName[server]
	if b == nil {
		return nil, &ServerError{Server: server, Reason: "no such server"}
	}
	var deadline time.Time
	if !opts.Unbounded {
		deadline = time.Now().Add(b.timeout)
	}
	var raw json.RawMessage
	b, c, err := b.awaitSession(ctx, deadline, opts, method, "")
	if err != nil {
		if te, ok := err.(*TimeoutError); ok {
			te.Name = nameOf(params)
		}
		return nil, err
	}
	o := rpcconn.CallOptions{Caps: opts.ClientCaps}
	if !deadline.IsZero() {
		o.Timeout = max(time.Until(deadline), time.Millisecond)
	}
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		raw = p
	default:
		if raw, err = wire.Marshal(p); err != nil {
			return nil, fmt.Errorf("%s %s: params: %w", server, method, err)
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		raw = nil
	}
	if c.protocolEra() == wire.PerRequestEra {
		switch method {
		case "logging/setLevel":
			return json.RawMessage(`{}`), nil // the level goes in every request's _meta
		case "resources/subscribe", "resources/unsubscribe":
			return b.subscription(c, method, raw)
		}
	}
	if opts.Progress != nil || len(opts.Meta) > 0 {
		var obj map[string]json.RawMessage
		if raw != nil {
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, fmt.Errorf("%s %s: params: %w", server, method, err)
			}
		}
		if obj == nil {
			obj = map[string]json.RawMessage{}
		}
		meta, err := m.meta(obj["_meta"], opts, &o)
		if err != nil {
			return nil, fmt.Errorf("%s %s: _meta: %w", server, method, err)
		}
		obj["_meta"] = meta
		if raw, err = wire.Marshal(obj); err != nil {
			return nil, fmt.Errorf("%s %s: params: %w", server, method, err)
		}
	} else if raw != nil {
		if raw, err = wire.Compact(raw); err != nil {
			return nil, fmt.Errorf("%s %s: params: %w", server, method, err)
		}
	}
	if method == "prompts/get" {
		if err := b.withheld(trust.Prompt, stringField(raw, "name")); err != nil {
			return nil, err
		}
	}
	res, err := c.Call(ctx, method, raw, o)
	name := ""
	if err != nil {
		name = stringField(raw, "name")
	}
	return res, b.callError(err, method, name)
}

// nameOf is the name a request's params give (a prompt's), or "".
func nameOf(params any) string {
	switch p := params.(type) {
	case json.RawMessage:
		return stringField(p, "name")
	case map[string]any:
		s, _ := p["name"].(string)
		return s
	}
	return ""
}

// meta builds a request's _meta: existing (the params' own, if any), then
// opts.Meta, then a fresh progress token when opts.Progress is set (which
// it also puts in o).
func (m *Manager) meta(existing json.RawMessage, opts CallOptions, o *rpcconn.CallOptions) (json.RawMessage, error) {
	obj := map[string]any{}
	if len(existing) > 0 && string(existing) != "null" {
		var e map[string]json.RawMessage
		if err := json.Unmarshal(existing, &e); err != nil {
			return nil, err
		}
		for k, v := range e {
			obj[k] = v
		}
	}
	for k, v := range opts.Meta {
		obj[k] = v
	}
	if opts.Progress != nil {
		o.Token = "gw-" + strconv.FormatInt(m.tokens.Add(1), 10)
		o.Progress = opts.Progress
		obj["progressToken"] = o.Token
	}
	return wire.Marshal(obj)
}

// callError maps a conn.call error to the package's error types.
func (b *backend) callError(err error, method, name string) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	switch {
	case errors.Is(err, rpcconn.ErrTimeout):
		return &TimeoutError{Server: b.cfg.Name, Method: method, Name: name, Timeout: b.timeout}
	case errors.As(err, &we):
		return &RPCError{Server: b.cfg.Name, Code: we.Code, Message: we.Message, Data: we.Data}
	}
	return err // *ServerError, ctx's error, or a write error naming the server
}

// Notify sends a notification to every ready backend (the client's
// notifications/roots/list_changed); params must be compact JSON or nil.
// It does not wait: each write is inline or queued as a call's is.
func (m *Manager) Notify(method string, params json.RawMessage) {
	for _, b := range m.backends() {
		c, err := b.readyConn()
		if err != nil {
			continue
		}
		if err := c.Notify(method, params); err != nil {
			b.log.Debug("notification not sent", "method", method, "err", err)
		}
	}
}

// level is the log level clients asked for, or "".
func (m *Manager) level() string {
	if l := m.logLevel.Load(); l != nil {
		return *l
	}
	return ""
}

// SetLogLevel sets the level of the log messages the backends send
// (logging/setLevel): every ready backend that declared logging is told
// now, and SetLogLevel waits for their answers; a backend that becomes
// ready later is told before it is. A backend that refuses is logged, not
// reported.
func (m *Manager) SetLogLevel(ctx context.Context, level string) {
	m.logLevel.Store(&level)
	params := map[string]any{"level": level}
	var wg sync.WaitGroup
	for _, server := range m.Declaring("logging") {
		wg.Go(func() {
			if _, err := m.Request(ctx, server, "logging/setLevel", params, CallOptions{}); err != nil {
				// The server's log, which masks its secrets in its error.
				log := m.log.With("server", server)
				if b := m.set.Load().byName[server]; b != nil {
					log = b.log
				}
				log.Debug("logging/setLevel not accepted", "err", err)
			}
		})
	}
	wg.Wait()
}

// Declaring returns the ready backends that declared capability, in
// configuration order: "logging", "resources", or "tasks.list" (the tasks
// capability's list); any other name, none.
func (m *Manager) Declaring(capability string) []string {
	has := map[string]func(serverCaps) bool{
		"logging":    func(c serverCaps) bool { return c.logging },
		"resources":  func(c serverCaps) bool { return c.resources },
		"tasks.list": func(c serverCaps) bool { return c.tasksList },
	}[capability]
	if has == nil {
		return nil
	}
	var out []string
	for _, b := range m.backends() {
		b.mu.Lock()
		if b.state == Ready && has(b.live.caps) {
			out = append(out, b.cfg.Name)
		}
		b.mu.Unlock()
	}
	return out
}

// Status returns every configured backend's status, in configuration order.
func (m *Manager) Status() []Status {
	list := m.backends()
	out := make([]Status, 0, len(list))
	for _, b := range list {
		b.mu.Lock()
		s := Status{
			Name:       b.cfg.Name,
			State:      b.state,
			Restarts:   b.restarts,
			Sandbox:    b.sandbox,
			From:       b.cfg.From,
			FileSHA256: b.cfg.FileSHA256,
		}
		if sf := b.shownLocked(); sf != nil {
			s.Tools, s.ServerInfo, s.Protocol = len(b.shownListsLocked(sf).tools), sf.serverInfo, sf.protocol
			s.Snapshot = b.state != Ready
			if b.trusted() {
				s.Withheld = len(b.trustedLocked(sf).held)
			}
		}
		if b.cfg.Enabled && !b.skipped {
			s.Trust = m.trust.policyOf(b.cfg.Trust)
		}
		if b.cfg.URL != "" {
			s.URL = config.RedactURL(b.cfg.URL)
		}
		if (b.pid != 0 || b.cfg.URL != "" && b.state == Ready) && b.state != Skipped {
			s.StartedAt = b.startedAt
		}
		// Only a live process has a PID worth showing: after a crash or a
		// failed start the old one may linger in the struct until the
		// supervisor has cleaned up.
		if b.state == Ready || b.state == Starting {
			s.PID = b.pid
		}
		switch b.state {
		case Ready, Starting, Stopped, Disabled:
		default:
			s.Error = b.reason
		}
		b.mu.Unlock()
		s.StderrTail = b.stderr.snapshot()
		out = append(out, s)
	}
	return out
}

// Close stops every backend: close its stdin, then SIGTERM its process
// group, then SIGKILL the group, and reaps it. Calls in flight fail with a
// *ServerError (Stopped). Backends stop concurrently; Close waits for all of
// them, for pending OnChange calls (so OnChange must not call Close), and for
// the reaper. It is safe to call more than once.
func (m *Manager) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		cancel := m.cancel
		m.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		m.wg.Wait()
		for _, b := range m.backends() {
			if b.cfg.Enabled && !b.skipped {
				b.setState(Stopped, "stopped")
			}
			b.settle()
		}
		m.trust.close() // first sights still queued are written
		m.mu.Lock()
		n, r := m.notify, m.reaper
		m.mu.Unlock()
		n.close()
		err = r.Close()
		if m.opts.Subreaper {
			if k := proc.EndOrphans(); k > 0 {
				m.log.Warn("killed orphaned descendants of backends", "count", k)
			}
		}
	})
	return err
}

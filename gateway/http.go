package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP front: Streamable HTTP (/mcp) is served by the gateway's own
// transport (streamable.go); the 2024-11-05 SSE transport (/sse +
// /messages) by go-sdk's SSEServerTransport. Each HTTP session is one
// session of the gateway (session.go), exactly as a stdio client is, so
// tools/call takes the one call path. docs/http.md explains the choice.

// HTTPOptions configure an HTTPFront.
type HTTPOptions struct {
	// Sessionless serves every POST to /mcp on its own, without a
	// session: any gateway process behind a round-robin balancer can
	// answer it (the configuration's gateway.http.stateless). Whatever
	// this says, a POST of the per-request era is served so.
	Sessionless bool
	// events keeps the events of /mcp streams so that a client can
	// resume one (Last-Event-ID); nil means a memory store of 10 MiB that
	// keeps a session's open streams and its last 100 completed ones
	// (streamhttp.EventStore).
	events mcp.EventStore
	// IdleTimeout ends a Streamable HTTP session that has had no request,
	// no call in flight and no open stream for this long; zero never
	// does.
	IdleTimeout time.Duration
	// SessionBufferBytes bounds the messages waiting for one session's
	// client to read them; a session whose client falls further behind
	// is ended. Zero means defaultSessionBufferBytes.
	SessionBufferBytes int64
	// MaxSessions bounds the sessions open at once, Streamable HTTP and
	// /sse alike: one more is refused with 503. Zero means
	// config.DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerIdentity bounds the sessions one caller holds (with
	// OAuth its principal's key, else its client's address, an IPv6 /64:
	// sessionOwner), so that one caller cannot take every session: one
	// more is refused with 503.
	// Zero means half of MaxSessions.
	MaxSessionsPerIdentity int
	// MaxStreams bounds the event streams open at once, GET /mcp and GET
	// /sse: one more is refused with 503. Zero means
	// config.DefaultMaxStreams.
	MaxStreams int
	// SSEHandshakeTimeout ends an /sse stream whose client has posted no
	// message for this long since it opened: a stream nobody uses holds
	// a session. Zero means defaultSSEHandshakeTimeout.
	SSEHandshakeTimeout time.Duration
	// Replica names this process among the replicas, in the sealed
	// session ids it issues (sessionseal.go) and the Mcp-Gateway-Replica
	// header of its answers (gateway.http.replica, else the host name and
	// port), made a valid name by ReplicaName. "" means a random name.
	Replica string
}

// defaultSessionBufferBytes is the byte budget of one HTTP session's
// outgoing queues (streamhttp.Budget) when HTTPOptions leave it unset.
const defaultSessionBufferBytes = 16 << 20

// defaultSSEHandshakeTimeout is HTTPOptions.SSEHandshakeTimeout's default:
// a client posts initialize as soon as it has read the endpoint event.
const defaultSSEHandshakeTimeout = time.Minute

// HTTPFront is the gateway's HTTP front as one http.Handler: MCP over
// Streamable HTTP (/mcp) and the 2024-11-05 SSE transport (/sse +
// /messages), the REST API (/mcp/tools, /mcp/call), and the same at
// /p/NAME/... for each profile of gateway.profiles (which serve its tools
// only; a name it lacks is 404). Other paths go to Other. Its methods are
// safe for concurrent use; Other is set before it serves.
type HTTPFront struct {
	// Other serves the requests for any other path (health, metrics, the
	// dashboard); nil: 404.
	Other http.Handler

	g      *Gateway
	mux    *http.ServeMux
	opts   HTTPOptions
	served []string // servedVersions, for every request's Mcp-Protocol-Version

	ctx  context.Context // parent of every session; cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup // one per session being served, and the expiry loop

	mu       sync.Mutex
	closed   bool
	sessions map[string]*httpSession // Streamable HTTP sessions, by Mcp-Session-Id
	sse      map[string]*sseSession  // SSE sessions, by sessionid
	streams  int                     // event streams open (GET /mcp, GET /sse)
	owners   map[string]string       // the owner (sessionOwner) of each of sessions, by id
	owned    map[string]int          // the sessions (both kinds) each owner holds
	// full is set while a limit refuses requests, so that the warning is
	// logged once each time a limit is reached, not per request.
	full bool

	// seal seals the ids of sessions of the handshake era, when the
	// replicas share a key; nil: ids are random, sessions this process's.
	seal *sessionSealer
	// deleted are the sealed ids this replica was told to DELETE, until
	// they expire (sealedhttp.go).
	deleted map[string]time.Time
}

// sseSession is one session of the 2024-11-05 transport: its stream's
// transport, and whether its client has posted anything.
type sseSession struct {
	t       *mcp.SSEServerTransport
	posted  atomic.Bool
	front   atomic.Pointer[front] // the session's, once started
	started chan struct{}         // closed when front is set, or the start failed
}

// ServeHTTP serves one request of the front.
func (h *HTTPFront) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// profiled serves h under the profile the path names (withProfile); a name
// gateway.profiles lacks is 404.
func (g *Gateway) profiled(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("profile")
		if !g.hasProfile(name) {
			refuseHTTP(w, http.StatusNotFound, "Not Found: no such profile (gateway.profiles)")
			return
		}
		h.ServeHTTP(w, r.WithContext(withProfile(r.Context(), name)))
	})
}

// NewHTTPFront returns an HTTP front for g.
func (g *Gateway) NewHTTPFront(opts HTTPOptions) *HTTPFront {
	if opts.events == nil {
		opts.events = streamhttp.NewEventStore(10<<20, 100)
	}
	if opts.SessionBufferBytes <= 0 {
		opts.SessionBufferBytes = defaultSessionBufferBytes
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = config.DefaultMaxSessions
	}
	if opts.MaxSessionsPerIdentity <= 0 {
		opts.MaxSessionsPerIdentity = max(1, opts.MaxSessions/2)
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = config.DefaultMaxStreams
	}
	if opts.SSEHandshakeTimeout <= 0 {
		opts.SSEHandshakeTimeout = defaultSSEHandshakeTimeout
	}
	ctx, stop := context.WithCancel(context.Background())
	h := &HTTPFront{
		g:        g,
		opts:     opts,
		served:   servedVersions(),
		ctx:      ctx,
		stop:     stop,
		sessions: make(map[string]*httpSession),
		sse:      make(map[string]*sseSession),
		owners:   make(map[string]string),
		owned:    make(map[string]int),
	}
	if !opts.Sessionless {
		h.seal = newSessionSealer(ReplicaName(opts.Replica), splitKeys(g.opts.StateKey))
	}
	h.mux = http.NewServeMux()
	for path, serve := range map[string]http.HandlerFunc{
		"/mcp": h.serveMCP, "/sse": h.serveSSE, "/messages": h.serveMessages,
		"/mcp/tools": g.serveTools, "/mcp/call": g.serveCall,
	} {
		h.mux.Handle(path, serve)
		h.mux.Handle("/p/{profile}"+path, g.profiled(serve))
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if h.Other == nil {
			http.NotFound(w, r)
			return
		}
		h.Other.ServeHTTP(w, r)
	})
	if opts.IdleTimeout > 0 && !opts.Sessionless {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.expireLoop(opts.IdleTimeout)
		}()
	}
	return h
}

const sessionIDHeader = "Mcp-Session-Id"

// sessionOptions configure a Streamable HTTP session of the front.
func (h *HTTPFront) sessionOptions(id string, store mcp.EventStore, stop func()) httpSessionOptions {
	return httpSessionOptions{ID: id, Store: store, Stop: stop, BufferBytes: h.opts.SessionBufferBytes, Logger: h.g.log}
}

// Sessions reports how many sessions are open.
func (h *HTTPFront) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions) + len(h.sse)
}

// Streams reports how many event streams are open.
func (h *HTTPFront) Streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams
}

// roomLocked says whether one more session of owner (session) and one
// more event stream (stream) fit the limits; when not, it answers w with
// 503 and a body that names the limit, and logs the first refusal since
// the gateway was last below its limits. h.mu is held.
func (h *HTTPFront) roomLocked(w http.ResponseWriter, owner string, session, stream bool) bool {
	key, n, limit, what := "", 0, 0, ""
	switch {
	case session && len(h.sessions)+len(h.sse) >= h.opts.MaxSessions:
		key, n, limit, what = "max_sessions", len(h.sessions)+len(h.sse), h.opts.MaxSessions, "sessions"
	case stream && h.streams >= h.opts.MaxStreams:
		key, n, limit, what = "max_streams", h.streams, h.opts.MaxStreams, "event streams"
	case session && h.owned[owner] >= h.opts.MaxSessionsPerIdentity:
		// The caller's own limit, not the gateway's: not logged (a client
		// that leaks sessions would fill the log).
		refuseHTTP(w, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: you hold %d open sessions, the most one caller may (gateway.http.max_sessions_per_identity); end unused ones (DELETE a session, close a stream)", h.owned[owner]))
		return false
	default:
		h.full = false
		return true
	}
	if !h.full {
		h.full = true
		h.g.log.Warn("http: refusing requests past a limit", "limit", "gateway.http."+key, "open", n)
	}
	refuseHTTP(w, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: the gateway has reached its limit of %d open %s (gateway.http.%s); end unused ones (DELETE a session, close a stream) or raise the limit", limit, what, key))
	return false
}

// openStream counts an event stream being served, if the limit has room
// (503 otherwise); the returned func, when not nil, ends it.
func (h *HTTPFront) openStream(w http.ResponseWriter) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.roomLocked(w, "", false, true) {
		return nil
	}
	h.streams++
	return func() {
		h.mu.Lock()
		h.streams--
		h.mu.Unlock()
	}
}

// sessionOwner is who a session opened by r counts against for
// MaxSessionsPerIdentity: its principal when that tells callers apart
// (auth: oauth), else its client's address. A holder of the shared token
// (auth: token) is one principal with every other. An IPv6 address counts
// by its /64, which one subscriber holds whole.
func sessionOwner(r *http.Request) string {
	if p := PrincipalOf(r.Context()); p != nil && p.Identity.Auth != "token" && p.Identity.Auth != "none" {
		return p.Key
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return "address:" + r.RemoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		return "address:" + netip.PrefixFrom(a, 64).Masked().String()
	}
	return "address:" + a.String()
}

// disownLocked gives back a session of owner. h.mu is held.
func (h *HTTPFront) disownLocked(owner string) {
	if h.owned[owner]--; h.owned[owner] <= 0 {
		delete(h.owned, owner)
	}
}

// addLocked records the Streamable HTTP session s of owner under id and
// returns how to forget it (removeLocked, then s's end). h.mu is held.
func (h *HTTPFront) addLocked(id, owner string, s *httpSession) (forget func()) {
	h.sessions[id] = s
	h.owners[id] = owner
	h.owned[owner]++
	return func() {
		h.mu.Lock()
		h.removeLocked(id)
		h.mu.Unlock()
		_ = s.Close()
	}
}

// removeLocked forgets the Streamable HTTP session id (its id gets 404
// from now on) and reports whether it was there. h.mu is held.
func (h *HTTPFront) removeLocked(id string) bool {
	if _, ok := h.sessions[id]; !ok {
		return false
	}
	delete(h.sessions, id)
	h.disownLocked(h.owners[id])
	delete(h.owners, id)
	return true
}

// Close ends every session: calls in flight are cancelled, and Close
// returns when every session's goroutines have exited. Later requests get
// 503.
func (h *HTTPFront) Close() {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*httpSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		_ = s.Close()
	}
	h.stop()
	h.wg.Wait()
}

// start serves a client stream as a session of the gateway, until ctx is
// done or the stream ends, with a front made of o; with o.version, as one
// request on its own (Gateway.serveOn). The session serves the principal of ctx
// (WithPrincipal). done, if not nil, runs when the session has ended. It
// returns the session's front, nil when the front is closed.
func (h *HTTPFront) start(ctx context.Context, cs clientStream, o frontOptions, done func()) *front {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	f := h.g.newFront(o)
	f.setCaller(ctx)
	h.wg.Add(1) // under mu, so never after Close's Wait began
	go func() {
		defer h.wg.Done()
		if done != nil {
			defer done()
		}
		if err := h.g.serveFront(ctx, f, cs); err != nil {
			h.g.log.Debug("http session ended", "err", err)
		}
	}()
	return f
}

// serveMCP serves the Streamable HTTP endpoint (/mcp): POST, GET, DELETE.
func (h *HTTPFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		if !jsonContent(w, r) {
			return
		}
		if j, s := accepts(r); !j || !s {
			refuseHTTP(w, http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'")
			return
		}
	case http.MethodGet:
		if h.opts.Sessionless {
			onlyMethod(w, r, http.MethodPost) // nothing to stream without a session
			return
		}
		if _, s := accepts(r); !s {
			refuseHTTP(w, http.StatusBadRequest, "Accept must contain 'text/event-stream' for GET requests")
			return
		}
	case http.MethodDelete:
		if h.opts.Sessionless {
			onlyMethod(w, r, http.MethodPost) // no session to end
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuseHTTP(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if h.seal != nil {
		// What a balancer learns this replica's name from (docs/deploy.md).
		w.Header().Set(replicaHeader, h.seal.Replica())
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	var (
		msgs       []inMsg
		calls      []json.RawMessage
		initialize bool
	)
	if r.Method == http.MethodPost {
		var ok bool
		if msgs, calls, initialize, ok = readPOST(w, r, version); !ok {
			return
		}
		if !h.g.admitPOST(w, r, calls) || !h.g.scopesOK(w, r, msgs) {
			return
		}
		if h.g.opts.Tracer != nil {
			traceHeaders(r.Header, msgs)
		}
		if postEra(version, msgs) == wire.PerRequestEra {
			// 2026-07-28: no session, whatever the headers say; any
			// replica serves it.
			h.servePerRequestEra(w, r, msgs, calls, version)
			return
		}
	}
	if version != "" && !slices.Contains(h.served, version) {
		refuseHTTP(w, http.StatusBadRequest, "Bad Request: Unsupported protocol version (supported versions: "+strings.Join(h.served, ",")+")")
		return
	}
	if h.opts.Sessionless {
		h.serveOnce(w, r, msgs, calls, version, initialize, wire.HandshakeEra)
		return
	}
	id := r.Header.Get(sessionIDHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			refuseHTTP(w, http.StatusBadRequest, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header")
			return
		}
		h.newSession(w, r, msgs, calls, version, initialize)
		return
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil && h.seal != nil {
		// A sealed id another replica issued, or this one before it
		// restarted or forgot the session: served from what it holds.
		var ok bool
		if s, ok = h.adopt(w, r, id); !ok {
			return
		}
	}
	if s == nil || !s.servedTo(r.Context()) || h.sealedExpired(id, s) {
		// Another principal's session is not found either: a session id
		// is no credential.
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return
	}
	if s.issuer != "" && !h.servesCopy(w, r, s, msgs) {
		return
	}
	switch r.Method {
	case http.MethodDelete:
		h.mu.Lock()
		h.removeLocked(id) // 404 from now on, while the session ends
		h.denyLocked(id, s.expires)
		h.mu.Unlock()
		_ = s.Close()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		if done := h.openStream(w); done != nil {
			defer done()
			s.get(w, r)
		}
	default:
		s.post(w, r, msgs, calls, version, initialize)
	}
}

// postEra returns the era of a POST: the per-request era if its version
// header, or a request's _meta, names 2026-07-28 or later.
func postEra(version string, msgs []inMsg) wire.Era {
	if wire.EraOf(version) == wire.PerRequestEra {
		return wire.PerRequestEra
	}
	for i := range msgs {
		if wire.EraOf(msgs[i].version) == wire.PerRequestEra { // set for requests only
			return wire.PerRequestEra
		}
	}
	return wire.HandshakeEra
}

// servePerRequestEra serves a POST of the per-request era: its headers
// are checked against its body (headers.go), and it is served on its own.
// An error answer says its kind in the HTTP status too (errorStatus).
func (h *HTTPFront) servePerRequestEra(w http.ResponseWriter, r *http.Request, msgs []inMsg, calls []json.RawMessage, version string) {
	// A tool of a server reached per caller is the caller's own list's.
	up := upstreamCaller(PrincipalOf(r.Context()))
	schema := func(tool string) json.RawMessage { return h.g.inputSchema(tool, up) }
	for i := range msgs {
		m := &msgs[i]
		if e := checkHeaders(r.Header, m, schema); e != nil {
			writeJSONError(w, http.StatusBadRequest, appendError(nil, m.ID, e))
			return
		}
		if m.version != "" {
			version = m.version
		}
	}
	h.serveOnce(w, r, msgs, calls, version, false, wire.PerRequestEra)
}

// readPOST reads a POST's messages; it answers the request itself (4xx)
// when they cannot be served.
func readPOST(w http.ResponseWriter, r *http.Request, version string) (msgs []inMsg, calls []json.RawMessage, initialize, ok bool) {
	if r.Header.Get("Last-Event-ID") != "" {
		refuseHTTP(w, http.StatusBadRequest, "can't send Last-Event-ID for POST request")
		return nil, nil, false, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		bodyError(w, err)
		return nil, nil, false, false
	}
	if len(body) == 0 {
		refuseHTTP(w, http.StatusBadRequest, "POST requires a non-empty body")
		return nil, nil, false, false
	}
	msgs, calls, batch, initialize, err := readMessages(body)
	if err != nil {
		refuseHTTP(w, http.StatusBadRequest, "malformed payload: "+err.Error())
		return nil, nil, false, false
	}
	// A POST refused whole is refused here, before admitPOST takes its
	// requests from the caller's bucket.
	if batch {
		if postEra(version, msgs) == wire.PerRequestEra {
			version = wire.PerRequestVersion // its requests' _meta says so
		}
		if version >= "2025-06-18" {
			refuseHTTP(w, http.StatusBadRequest, "JSON-RPC batching is not supported in 2025-06-18 and later (request version: "+version+")")
			return nil, nil, false, false
		}
		for i, id := range calls {
			// Its answers could not be told apart.
			if slices.ContainsFunc(calls[:i], func(c json.RawMessage) bool { return bytes.Equal(c, id) }) {
				writeJSONError(w, http.StatusBadRequest, appendError(nil, id, errDuplicateID))
				return nil, nil, false, false
			}
		}
	}
	return msgs, calls, initialize, true
}

// newSession starts a Streamable HTTP session with the request that opens
// it (initialize).
func (h *HTTPFront) newSession(w http.ResponseWriter, r *http.Request, msgs []inMsg, calls []json.RawMessage, version string, initialize bool) {
	if !initialize {
		// Nobody could reach a session opened by anything else: its id
		// is sent only with initialize's answer.
		refuseHTTP(w, http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required (a session starts with initialize)")
		return
	}
	if version == "" {
		version = initializeVersion(msgs)
	}
	id, expires := h.newID(r, msgs)
	sealed := !expires.IsZero()
	owner := sessionOwner(r)
	h.mu.Lock()
	if !h.roomLocked(w, owner, true, false) {
		h.mu.Unlock()
		return
	}
	// Made under mu, once there is room: a session opens its stream in
	// the event store.
	ctx, cancel := context.WithCancel(callerContext(h.ctx, r.Context()))
	s := newHTTPSession(h.sessionOptions(id, h.opts.events, cancel))
	s.expires = expires
	forget := h.addLocked(id, owner, s)
	h.mu.Unlock()
	f := h.start(ctx, s, frontOptions{sealed: sealed}, forget)
	if f == nil {
		forget()
		refuseHTTP(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	s.front.Store(f)
	s.post(w, r, msgs, calls, version, initialize)
}

// serveOnce serves a POST's messages as a session of their own, which
// ends with the request. A POST of the per-request era (era) has an error
// answer set the HTTP status too (errorStatus).
func (h *HTTPFront) serveOnce(w http.ResponseWriter, r *http.Request, msgs []inMsg, calls []json.RawMessage, version string, initialize bool, era wire.Era) {
	// A POST served on its own cannot be resumed, so it has no priming
	// event: post needs no version but the header's, even for an
	// initialize. The session starts as if initialized (at the version
	// asked for, else the first with Streamable HTTP) unless the POST is
	// the initialize.
	served := ""
	if !initialize {
		served = version
		if served == "" {
			served = "2025-03-26"
		}
	}
	ctx, cancel := context.WithCancel(callerContext(h.ctx, r.Context()))
	o := h.sessionOptions("", nil, cancel)
	o.ErrorStatus = era == wire.PerRequestEra
	s := newHTTPSession(o)
	ended := make(chan struct{})
	if h.start(ctx, s, frontOptions{version: served}, func() { close(ended) }) == nil {
		refuseHTTP(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	s.post(w, r, msgs, calls, version, initialize)
	_ = s.Close()
	<-ended
}

// initializeVersion is the protocol version an initialize request asks
// for.
func initializeVersion(msgs []inMsg) string {
	for i := range msgs {
		if msgs[i].Method == "initialize" {
			v, _ := wire.Unquote(wire.Member(msgs[i].Params, "protocolVersion"))
			return v
		}
	}
	return ""
}

// expireLoop ends the sessions idle for longer than timeout, until the
// front closes. A session is looked at every quarter of the timeout, so
// one ends between timeout and 1.25 × timeout after it went idle.
func (h *HTTPFront) expireLoop(timeout time.Duration) {
	t := time.NewTicker(timeout / 4)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case now := <-t.C:
			h.expire(now.Add(-timeout))
		}
	}
}

// expire ends the sessions idle since before cutoff; their ids get 404
// from now on.
func (h *HTTPFront) expire(cutoff time.Time) {
	var idle []*httpSession
	h.mu.Lock()
	for id, s := range h.sessions {
		if s.idle(cutoff) {
			h.removeLocked(id)
			idle = append(idle, s)
		}
	}
	h.mu.Unlock()
	for _, s := range idle {
		h.g.log.Info("http session expired", "idle_for_more_than", h.opts.IdleTimeout)
		_ = s.Close()
	}
}

// serveSSE serves GET /sse, the 2024-11-05 transport's event stream: the
// session lives as long as the request. Its client posts to /messages
// beside it.
func (h *HTTPFront) serveSSE(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodGet) || !h.g.admitStream(w, r) {
		return
	}
	id := rand.Text()
	owner := sessionOwner(r)
	// The client posts beside its stream: /messages, or a profile's
	// /p/NAME/messages.
	endpoint := strings.TrimSuffix(r.URL.Path, "sse") + "messages?sessionid=" + id
	t := &mcp.SSEServerTransport{Endpoint: endpoint, Response: w}
	sess := &sseSession{t: t, started: make(chan struct{})}
	var startOnce sync.Once
	markStarted := func() { startOnce.Do(func() { close(sess.started) }) }
	defer markStarted()
	// Registered before Connect, which sends the client the endpoint: the
	// client may post to it at once.
	h.mu.Lock()
	if !h.roomLocked(w, owner, true, true) {
		h.mu.Unlock()
		return
	}
	h.sse[id] = sess
	h.streams++
	h.owned[owner]++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sse, id)
		h.streams--
		h.disownLocked(owner)
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	conn, err := t.Connect(r.Context())
	if err != nil {
		return // the client is gone
	}
	ctx, cancel := context.WithCancel(callerContext(h.ctx, r.Context()))
	defer cancel()
	ended := make(chan struct{})
	// This goroutine is the stream's writer (sdkStream.pump): the
	// session only queues what it writes.
	s := &sdkStream{ctx: ctx, conn: conn, q: streamhttp.NewQueue(streamhttp.NewBudget(h.opts.SessionBufferBytes))}
	s.full = func(err error) {
		if ctx.Err() == nil {
			h.g.log.Warn("sse session ended: its client does not read its stream", "session", id, "err", err)
			cancel()
		}
	}
	f := h.start(ctx, s, frontOptions{}, func() { close(ended) })
	if f == nil {
		_ = conn.Close()
		return
	}
	sess.front.Store(f)
	markStarted()
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		// A stream whose client posts nothing (not even initialize)
		// holds a session and a stream for nothing: it ends.
		idle := time.NewTimer(h.opts.SSEHandshakeTimeout)
		defer idle.Stop()
		for {
			select {
			case <-r.Context().Done():
			case <-ended:
			case <-ctx.Done():
			case <-idle.C:
				if sess.posted.Load() {
					continue
				}
				h.g.log.Info("sse stream ended: its client posted nothing", "session", id, "within", h.opts.SSEHandshakeTimeout)
			}
			return
		}
	}()
	cut := streamhttp.CutOnClose(stop, http.NewResponseController(w))
	if err := s.pump(stop, cut); err != nil {
		h.g.log.Debug("sse stream ended", "err", err)
	}
	cancel()
	cut.Stop()
	_ = conn.Close()
	<-ended
}

// serveMessages serves POST /messages?sessionid=ID for SSE sessions.
func (h *HTTPFront) serveMessages(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodPost) {
		return
	}
	if !jsonContent(w, r) {
		return
	}
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		refuseHTTP(w, http.StatusBadRequest, "sessionid must be provided")
		return
	}
	h.mu.Lock()
	sess := h.sse[id]
	h.mu.Unlock()
	if sess != nil {
		// The client learns the endpoint when the stream opens, and may
		// post before the session behind it has started.
		select {
		case <-sess.started:
		case <-r.Context().Done():
			return
		}
	}
	if sess == nil || !servedTo(&sess.front, r.Context()) {
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return
	}
	// The messages are read as the Streamable HTTP POST reads them
	// (readPOST), counted and checked before go-sdk's transport reads
	// them: a body that cannot be read strictly is refused, never passed
	// on unchecked for go-sdk's laxer reading to serve.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		bodyError(w, err)
		return
	}
	msgs, calls, batch, _, err := readMessages(body)
	if err == nil && batch {
		// go-sdk's transport serves one message per POST: a batch would
		// be counted and then refused.
		err = errors.New("batches are not supported")
	}
	if err != nil {
		refuseHTTP(w, http.StatusBadRequest, "malformed payload: "+err.Error())
		return
	}
	if !h.g.admitPOST(w, r, calls) || !h.g.scopesOK(w, r, msgs) {
		return
	}
	if h.g.opts.Tracer != nil && len(msgs) == 1 && traceHeaders(r.Header, msgs) {
		// go-sdk's transport reads the body: the request with the
		// trace context the headers carried.
		body = wire.AppendRequest(nil, msgs[0].ID, msgs[0].Method, msgs[0].Params)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sess.posted.Store(true)
	sess.t.ServeHTTP(w, r)
}

// jsonContent checks that a POST carries JSON (415 otherwise).
func jsonContent(w http.ResponseWriter, r *http.Request) bool {
	if !isJSONContent(r) {
		refuseHTTP(w, http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'")
		return false
	}
	return true
}

// isJSONContent reports whether r's Content-Type is application/json.
func isJSONContent(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// accepts reports whether the Accept header admits JSON and event streams.
func accepts(r *http.Request) (jsonOK, streamOK bool) {
	for _, v := range r.Header.Values("Accept") {
		for _, tok := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// bodyError answers a body that could not be read: 413 over the limit.
func bodyError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		refuseHTTP(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
		return
	}
	refuseHTTP(w, http.StatusBadRequest, "read body: "+err.Error())
}

// onlyMethod answers 405 to a request whose method is not m.
func onlyMethod(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m {
		return true
	}
	w.Header().Set("Allow", m)
	refuseHTTP(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	return false
}

// servedTo reports whether the session whose front f holds serves a
// request of ctx (front.serves; an unstarted one serves nobody yet).
func servedTo(f *atomic.Pointer[front], ctx context.Context) bool {
	fr := f.Load()
	return fr != nil && fr.serves(ctx)
}

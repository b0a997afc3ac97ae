package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP front: go-sdk's transports (StreamableServerTransport for /mcp,
// SSEServerTransport for /sse + /messages) move the messages; each HTTP
// session is one session of the gateway (session.go), exactly as a stdio
// client is, so tools/call takes the one call path. go-sdk's handlers
// (NewStreamableHTTPHandler, NewSSEHandler) are not used because they connect
// an mcp.Server to the transport directly, which would bypass the session.
// docs/http.md explains the choice.

// HTTPOptions configure an HTTPFront.
type HTTPOptions struct {
	// Stateless serves every POST to /mcp on its own, without a session:
	// any gateway process behind a round-robin balancer can answer it.
	Stateless bool
	// EventStore keeps the events of /mcp streams so that a client can
	// resume one (Last-Event-ID); nil means a memory store.
	EventStore mcp.EventStore
}

// HTTPFront serves MCP over HTTP: Streamable HTTP and the 2024-11-05 SSE
// transport. Its methods are safe for concurrent use.
type HTTPFront struct {
	g    *Gateway
	opts HTTPOptions

	ctx  context.Context // parent of every session; cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup // one per session being served

	mu       sync.Mutex
	closed   bool
	sessions map[string]mcp.Connection // Streamable HTTP sessions, by Mcp-Session-Id
	streams  map[string]*mcp.StreamableServerTransport
	sse      map[string]*mcp.SSEServerTransport // SSE sessions, by sessionid
}

// NewHTTPFront returns an HTTP front for g.
func (g *Gateway) NewHTTPFront(opts HTTPOptions) *HTTPFront {
	if opts.EventStore == nil {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &HTTPFront{
		g:        g,
		opts:     opts,
		ctx:      ctx,
		stop:     stop,
		sessions: make(map[string]mcp.Connection),
		streams:  make(map[string]*mcp.StreamableServerTransport),
		sse:      make(map[string]*mcp.SSEServerTransport),
	}
}

const sessionIDHeader = "Mcp-Session-Id"

// Sessions reports how many sessions are open.
func (h *HTTPFront) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions) + len(h.sse)
}

// Close ends every session: calls in flight are cancelled, and Close
// returns when every session's goroutines have exited. Later requests get
// 503.
func (h *HTTPFront) Close() {
	h.mu.Lock()
	h.closed = true
	conns := make([]mcp.Connection, 0, len(h.sessions))
	for _, c := range h.sessions {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	h.stop()
	h.wg.Wait()
}

// start serves a connection as a session of the gateway, until it closes
// or the front does. done, if not nil, runs when the session has ended.
func (h *HTTPFront) start(ctx context.Context, conn mcp.Connection, state *mcp.ServerSessionState, done func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1) // under mu, so never after Close's Wait began
	go func() {
		defer h.wg.Done()
		if done != nil {
			defer done()
		}
		if err := h.g.serveState(ctx, &sdkStream{ctx: ctx, conn: conn}, state); err != nil {
			h.g.log.Debug("http session ended", "err", err)
		}
	}()
	return true
}

// ServeMCP serves the Streamable HTTP endpoint (/mcp): POST, GET, DELETE.
func (h *HTTPFront) ServeMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		if !jsonContent(w, r) {
			return
		}
		if j, s := accepts(r); !j || !s {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
		if h.opts.Stateless {
			h.serveStateless(w, r)
			return
		}
	case http.MethodGet:
		if h.opts.Stateless {
			onlyMethod(w, r, http.MethodPost) // nothing to stream without a session
			return
		}
		if _, s := accepts(r); !s {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
	case http.MethodDelete:
		if h.opts.Stateless {
			onlyMethod(w, r, http.MethodPost) // no session to end
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	id := r.Header.Get(sessionIDHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
		h.newSession(w, r)
		return
	}
	h.mu.Lock()
	conn, t := h.sessions[id], h.streams[id]
	h.mu.Unlock()
	if conn == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodDelete {
		_ = conn.Close()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	t.ServeHTTP(w, r)
}

// newSession starts a Streamable HTTP session with the request that opens
// it (initialize).
func (h *HTTPFront) newSession(w http.ResponseWriter, r *http.Request) {
	id := rand.Text()
	t := &mcp.StreamableServerTransport{SessionID: id, EventStore: h.opts.EventStore}
	conn, err := t.Connect(h.ctx)
	if err != nil {
		http.Error(w, "connect: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h.mu.Lock()
	h.sessions[id] = conn
	h.streams[id] = t
	h.mu.Unlock()
	forget := func() {
		h.mu.Lock()
		delete(h.sessions, id)
		delete(h.streams, id)
		h.mu.Unlock()
	}
	if !h.start(h.ctx, conn, nil, forget) {
		forget()
		_ = conn.Close()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	t.ServeHTTP(w, r)
}

// serveStateless serves one POST as a session of its own, which starts as
// if initialized (unless the POST is the initialize) and ends with the
// request.
func (h *HTTPFront) serveStateless(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		bodyError(w, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var state *mcp.ServerSessionState
	if m, err := wire.Decode(body); err != nil || m.Method != "initialize" {
		version := r.Header.Get("Mcp-Protocol-Version")
		if version == "" {
			version = "2025-03-26"
		}
		state = &mcp.ServerSessionState{
			InitializeParams:  &mcp.InitializeParams{ProtocolVersion: version, ClientInfo: &mcp.Implementation{}},
			InitializedParams: &mcp.InitializedParams{},
			LogLevel:          "info",
		}
	}
	t := &mcp.StreamableServerTransport{Stateless: true}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	conn, err := t.Connect(ctx)
	if err != nil {
		http.Error(w, "connect: "+err.Error(), http.StatusInternalServerError)
		return
	}
	ended := make(chan struct{})
	if !h.start(ctx, conn, state, func() { close(ended) }) {
		_ = conn.Close()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	t.ServeHTTP(w, r)
	_ = conn.Close()
	<-ended
}

// ServeSSE serves GET /sse, the 2024-11-05 transport's event stream: the
// session lives as long as the request. Its client posts to /messages.
func (h *HTTPFront) ServeSSE(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodGet) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := rand.Text()
	t := &mcp.SSEServerTransport{Endpoint: "/messages?sessionid=" + id, Response: w}
	// Registered before Connect, which sends the client the endpoint: the
	// client may post to it at once.
	h.mu.Lock()
	h.sse[id] = t
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sse, id)
		h.mu.Unlock()
	}()
	conn, err := t.Connect(r.Context())
	if err != nil {
		return // the client is gone
	}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	ended := make(chan struct{})
	if !h.start(ctx, conn, nil, func() { close(ended) }) {
		_ = conn.Close()
		return
	}
	select {
	case <-r.Context().Done():
	case <-ended:
	}
	_ = conn.Close()
	<-ended
}

// ServeMessages serves POST /messages?sessionid=ID for SSE sessions.
func (h *HTTPFront) ServeMessages(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodPost) {
		return
	}
	if !jsonContent(w, r) {
		return
	}
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		http.Error(w, "sessionid must be provided", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	t := h.sse[id]
	h.mu.Unlock()
	if t == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	t.ServeHTTP(w, r)
}

// jsonContent checks that a POST carries JSON (415 otherwise).
func jsonContent(w http.ResponseWriter, r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return false
	}
	return true
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
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
}

// onlyMethod answers 405 to a request whose method is not m.
func onlyMethod(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m {
		return true
	}
	w.Header().Set("Allow", m)
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	return false
}

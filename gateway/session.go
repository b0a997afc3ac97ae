package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// The session is the one owner of a client connection: it reads every
// message, decoded once by its transport or the HTTP front (readMsg, ids
// kept as the client's exact bytes), keeps the one table of requests in flight, and
// serves every request itself, raw, in either era of the protocol
// (versions.go): the handshake and what belongs to it (lifecycle.go), the
// calls, lists, prompts, resources, completion and tasks. It depends on no
// transport: a transport only moves whole messages (clientStream).

// clientStream is a client connection as the session sees it: whole
// messages in, whole messages out, as go-sdk's Connection. Each transport
// (stdio, Streamable HTTP, go-sdk's) does with an outgoing message what it
// can, from what the message says of itself (outMsg); the session never
// asks which transport it has.
type clientStream interface {
	// Read returns the next message, decoded (readMsg; owned by the
	// caller), or input that is not one, with bad set (answered with
	// -32700 or -32600). err ends the input: io.EOF at its end. It is
	// called from one goroutine. Before it waits for input it calls wait
	// (when not nil), on the calling goroutine.
	Read(wait func()) (inMsg, error)
	// Send sends one message to the client, or, with nothing to send
	// (outMsg.empty) and not final, writes what earlier held messages left waiting (a flush). It
	// is safe for concurrent use.
	Send(m outMsg) error
	// Gone reports, without writing, that nobody reads the output any more
	// (stdio: the pipe's read end closed); false where a transport cannot
	// tell.
	Gone() bool
	// Close makes later Sends fail.
	Close() error
}

// outMsg is one message to the client and what the session knows of it.
type outMsg struct {
	// msg is the message; or parts make it one after the other (a large
	// result is sent from where it lies), and msg is nil. Neither: nothing
	// to send (a flush, or a response that is suppressed). msg spares the
	// usual message of one part a slice of its own (an allocation per
	// call).
	msg   []byte
	parts [][]byte
	// result, when not nil (msg and parts are then nil), makes the message
	// the response to id with this result (wire.AppendResult): a stream
	// that holds messages for a burst makes it where it holds them
	// (stdio.Conn.BufferAppend), the others by message(). It is valid only
	// during Send (it may lie in a backend's read buffer).
	result json.RawMessage
	// id is the client's request the message belongs to (its response,
	// progress, or a request made to the client while serving it): a
	// transport with a way out per request (Streamable HTTP: the response
	// stream of its POST) sends it there. nil: it belongs to none.
	id json.RawMessage
	// final: the message is id's response; nothing of id follows it.
	final bool
	// key, if not "", says that a later message of the same key makes
	// this one obsolete (a call's progress): a stream may keep only the
	// latest per key while the client reads slowly.
	key string
	// hold: the message may wait for the next one that does not, or for a
	// flush, so that a burst goes out in one write.
	hold bool
}

// empty reports whether m has nothing to send.
func (m outMsg) empty() bool { return m.msg == nil && len(m.parts) == 0 && m.result == nil }

// message is the whole message.
func (m outMsg) message() []byte {
	if m.msg != nil {
		return m.msg
	}
	if m.result != nil {
		return m.appendResult(make([]byte, 0, len(m.result)+len(m.id)+40))
	}
	if len(m.parts) == 1 {
		return m.parts[0]
	}
	return bytes.Join(m.parts, nil)
}

// appendResult appends the response m.result makes.
func (m outMsg) appendResult(buf []byte) []byte { return wire.AppendResult(buf, m.id, m.result) }

// drainGrace bounds how long the end of input is held back for calls still
// in flight.
const drainGrace = 30 * time.Second

// session serves one client connection.
type session struct {
	f   *front
	s   goneStream
	log *slog.Logger

	ctx  context.Context // ends when the session closes; parent of every call
	stop context.CancelFunc

	inputOK chan struct{} // closed when the input has ended and the calls in flight are answered
	readErr error         // why the input ended; set before inputOK is closed
	closed  chan struct{}

	mu      sync.Mutex
	done    bool                     // set by close: no call starts after it
	calls   map[string]*call         // the one table of requests in flight, by the id's exact bytes
	out     map[string]chan outReply // the session's own requests to the client, by id (outgoing.go)
	nextOut int64
	busy    int            // responses being written
	drained chan struct{}  // closed when calls and busy are both empty, during a drain
	wg      sync.WaitGroup // goroutines of calls that may wait (spawn)

	gone clientGone // the client cannot be written to: the session ends

	// transport names the client's transport in spans: "pipe" (stdio) or
	// "tcp" (HTTP).
	transport string
	// pending is the span of the request being read, until the request
	// is claimed (its call's) or answered at once (writeError); the
	// reader's own (trace.go).
	pending trace.Span
}

// call is one request in flight.
type call struct {
	id        json.RawMessage     // exactly as the client sent it
	method    string              // the request's method
	name      string              // what its Mcp-Name header carries (inMsg.name): a tool's, a prompt's, a URI
	cancel    backends.CancelFunc // how to cancel it; set once started
	server    string              // the backend a tools/call went to, if known when it started
	tool      string              // the tool a tools/call called; set once started
	cancelled bool                // the client sent notifications/cancelled: no response
	token     json.RawMessage     // a tools/call's _meta.progressToken as sent; nil without one
	// era is the request's: one of the per-request era has its result say
	// its resultType and the gateway's serverInfo (front.result), and caps
	// are the capabilities it declared, compacted (inMsg.eraMeta); nil in
	// the handshake era.
	era  wire.Era
	caps json.RawMessage
	// hold, once set, is the held call this request was (hold.go): the
	// backend's answer goes to the hold, not to this request.
	hold *hold
	// owned: a goroutine of the session serves the call (spawnCall), and
	// close waits for it — until the call is held, when the hold owns it.
	owned bool
	// span is the request's span, when tracing (trace.go).
	span trace.Span
}

func newSession(f *front, s clientStream) *session {
	ctx, stop := context.WithCancel(context.Background())
	ss := &session{
		f:       f,
		log:     f.log,
		ctx:     ctx,
		stop:    stop,
		inputOK: make(chan struct{}),
		closed:  make(chan struct{}),
		calls:   make(map[string]*call),
		out:     make(map[string]chan outReply),
	}
	ss.gone.ch = make(chan struct{})
	ss.s = goneStream{clientStream: s, onFail: ss.writeFailed}
	ss.transport = "tcp"
	if f.pipe {
		ss.transport = "pipe"
	}
	return ss
}

// readLoop reads the client until the end of input, then waits for the
// calls in flight (drain). After close it serves nothing more; it exits
// when the current Read returns.
func (s *session) readLoop() {
	flush := s.flushBackends // once: a method value allocates
	for {
		// The calls started from buffered input are held back and
		// written to their backends together, before Read waits.
		in, err := s.s.Read(flush)
		if err != nil {
			if err == io.EOF {
				s.log.Debug("end of input")
				s.drain()
			} else {
				s.log.Warn("read failed", "err", err)
			}
			s.readErr = err
			close(s.inputOK)
			return
		}
		if s.isClosed() {
			return
		}
		s.handle(&in)
	}
}

// handle routes one message.
func (s *session) handle(m *inMsg) {
	if m.bad != nil {
		s.reject(m.bad)
		return
	}
	if m.ambiguous != nil {
		// Refused before anything reads the params: the gateway and the
		// backend would not read them alike (inmsg.go).
		s.log.Warn("refused a message with ambiguous members", "method", m.Method, "reason", m.ambiguous.Error())
		if m.IsCall() {
			s.writeError(m.ID, errInvalidParams(m.ambiguous.Error()))
		}
		return
	}
	switch {
	case m.IsCall():
		s.serveRequest(m)
	case m.IsNotification():
		switch m.Method {
		case methodCancelled:
			s.cancelled(m.Params)
		case methodRootsChanged:
			s.f.rootsChanged(m.Params)
		case "notifications/initialized":
			// Nothing waits for it: the answer to initialize ended the
			// handshake (go-sdk waits for it, to no effect for a proxy).
		default:
			s.log.Debug("ignored a client notification", "method", m.Method)
		}
	default:
		if !s.reply(&m.Message) {
			s.log.Debug("dropped a response to an unknown id", "id", string(m.ID))
		}
	}
}

const (
	methodCancelled    = "notifications/cancelled"
	methodRootsChanged = "notifications/roots/list_changed"
)

// serveRequest serves one request of either era: which one is the
// request's own _meta's to say (versions.go).
func (s *session) serveRequest(m *inMsg) {
	rm, merr := m.eraMeta()
	if merr != nil {
		s.writeError(m.ID, merr)
		return
	}
	f := s.f
	if f.g.opts.Tracer != nil {
		s.pending = f.g.requestSpan(s.ctx, m, s.transport)
		defer func() {
			if sp := s.pending; sp != nil { // answered without a call: at once
				s.pending = nil
				sp.End()
			}
		}()
	}
	if rm.era == wire.PerRequestEra && f.identify(rm.client, rm.caps, rm.version) {
		// Over stdio, backends wait for the client's capabilities:
		// a client of this era says them in its first request.
		f.g.opts.Backends.SetClientCapabilities(rm.caps, wire.PerRequestEra)
	}
	method := m.Method
	if e := f.refuse(method, rm.era); e != nil {
		s.writeError(m.ID, e)
		return
	}
	switch method {
	case "initialize":
		s.initialize(m)
	case "ping":
		if err := checkParams(m.Params); err != nil {
			s.writeError(m.ID, err.(*jsonrpc.Error))
			return
		}
		s.answer(m, rm, json.RawMessage(`{}`))
	case "logging/setLevel":
		s.startRequest(m, rm, f.setLevel)
	case "resources/subscribe", "resources/unsubscribe":
		s.startRequest(m, rm, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return f.subscription(ctx, method, params)
		})
	case methodDiscover:
		s.startRequest(m, rm, f.discover)
	case methodListen:
		s.listen(m)
	case "tools/call":
		s.startToolCall(m, rm)
	case methodComplete:
		s.startRequest(m, rm, f.redacting(f.complete))
	case "prompts/get":
		s.startRequest(m, rm, f.redacting(f.getPrompt))
	case "resources/read":
		s.startRequest(m, rm, f.redacting(func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return f.readResource(ctx, params, rm.era)
		}))
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", methodTasksUpdate:
		s.startRequest(m, rm, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return f.task(ctx, method, params, rm)
		})
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		s.startRequest(m, rm, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return f.list(ctx, method, params, rm.era)
		})
	default:
		s.writeError(m.ID, errMethodNotFound(method))
	}
}

// flushBackends writes the calls started since the last flush to their
// backends, in one write each (backends.CallOptions.Batch). The reader
// calls it before anything that may wait.
func (s *session) flushBackends() {
	s.f.g.opts.Backends.FlushWrites()
}

// claim records a request in flight. A request id already in flight is
// answered with -32600 and not claimed: the call in flight keeps its id
// and its entry.
func (s *session) claim(m *inMsg, rm reqMeta) (*call, bool) {
	return s.claimInto(nil, m, rm)
}

// claimInto is claim recording the request in c, which the caller
// allocated with what else it keeps of the request (a new one when nil).
func (s *session) claimInto(c *call, m *inMsg, rm reqMeta) (*call, bool) {
	id := m.ID
	s.mu.Lock()
	if _, dup := s.calls[string(id)]; dup || s.done {
		s.mu.Unlock()
		if dup {
			s.writeError(id, errDuplicateID)
		}
		return nil, false
	}
	if c == nil {
		c = new(call)
	}
	*c = call{id: id, method: m.Method, name: m.name, span: s.pending, era: rm.era, caps: rm.caps}
	s.pending = nil
	s.calls[string(id)] = c
	s.mu.Unlock()
	return c, true
}

// answer answers a request at once with result (no call in flight).
func (s *session) answer(m *inMsg, rm reqMeta, result json.RawMessage) {
	c, ok := s.claim(m, rm)
	if ok {
		s.respond(c, result, nil)
	}
}

// startToolCall serves a tools/call through the call core (toolcall.go),
// on the reader: a call to a backend tool in the current tables that
// needs no wait starts right here and is answered from the backend's read
// loop, with no goroutine of its own and no hand-off (the backend's writes
// never block, see backends.Manager.StartToolCall); anything that may wait
// runs in a goroutine of the session's (spawnCall).
func (s *session) startToolCall(m *inMsg, rm reqMeta) {
	// The call's record and its run are one allocation.
	sc := new(sessionCall)
	c, ok := s.claimInto(&sc.call, m, rm)
	if !ok {
		return
	}
	f := s.f
	tc, err := decodeToolCall(m)
	if err != nil {
		s.respond(c, nil, rpcError(err, kindTool, "", false))
		return
	}
	var progress func(*mcp.ProgressNotificationParams) // only a call with a token gets progress
	if token := tc.progressToken(); token != nil {
		s.mu.Lock()
		c.token = bytes.Clone(token)
		s.mu.Unlock()
		progress = func(p *mcp.ProgressNotificationParams) { s.progress(c, p) }
	}
	if c.era == wire.PerRequestEra {
		hold, state, err := s.retryState(c, m.param("requestState"))
		switch {
		case err != nil:
			s.setCancel(c, nil, tc.name, "")
			s.respond(c, nil, errInvalidParams(err.Error()))
			return
		case hold != "":
			s.setCancel(c, nil, tc.name, "")
			s.resume(c, m.Params, hold)
			return
		case state != nil:
			tc.extra, _ = wire.SetMember(tc.extra, "requestState", state)
		}
	}
	tc.era, tc.caps, tc.id, tc.span = c.era, c.caps, c.id, c.span
	if c.era == wire.PerRequestEra {
		// 2026-07-28 has no task-augmented calls: a server decides
		// whether a call becomes a task (the tasks extension, tasks.go).
		// A client's leftover params.task is not passed on, so that a
		// backend of 2025-11-25 does not answer with a task of that
		// design, which such a client cannot follow.
		tc.task = nil
	}
	sc.s = s
	f.startCall(&sc.run, tc, progress, sc)
}

// sessionCall is a tools/call of the session's as the call core sees its
// front (toolcall.go).
type sessionCall struct {
	run  callRun
	call call // the session's record of the request
	s    *session
}

func (h *sessionCall) inline() bool { return true }
func (h *sessionCall) context() (context.Context, backends.CancelFunc) {
	return h.s.callContext(&h.call)
}
func (h *sessionCall) spawn(fn func()) bool { return h.s.spawnCall(&h.call, fn) }
func (h *sessionCall) started(cancel backends.CancelFunc, server string) {
	h.s.setCancel(&h.call, cancel, h.run.tc.name, server)
}

// deliver answers the call with its outcome: a held call's goes to the
// client's retry (hold.go), any other's to the call, sealed for its caller
// (sealBackendState).
func (h *sessionCall) deliver(raw json.RawMessage, e *jsonrpc.Error, buffered bool) {
	s, c := h.s, &h.call
	if hd := s.heldBy(c); hd != nil {
		if e != nil {
			hd.finish(nil, e)
		} else {
			hd.finish(raw, nil)
		}
		return
	}
	if e != nil {
		s.respond(c, nil, e)
		return
	}
	raw, err := s.sealBackendState(c, raw)
	switch {
	case err != nil:
		s.respond(c, nil, rpcError(err, kindTool, h.run.tc.name, false))
	case buffered:
		s.respondBuffered(c, raw)
	default:
		s.respond(c, raw, nil)
	}
}

// startRequest serves a request other than tools/call in a goroutine of
// its own: it may wait (for backends, for the client).
func (s *session) startRequest(m *inMsg, rm reqMeta, serve func(context.Context, json.RawMessage) (json.RawMessage, error)) {
	c, ok := s.claim(m, rm)
	if !ok {
		return
	}
	params := m.Params
	if c.era == wire.PerRequestEra && holdable(m.Method) {
		hold, state, err := s.retryState(c, m.param("requestState"))
		switch {
		case err != nil:
			s.respond(c, nil, errInvalidParams(err.Error()))
			return
		case hold != "":
			s.resume(c, params, hold)
			return
		case state != nil:
			params, _ = wire.SetMember(params, "requestState", state)
		}
	}
	ctx, cancel := s.callContext(c)
	if !s.spawnCall(c, func() {
		defer cancel(nil)
		raw, err := serve(ctx, params)
		if h := s.heldBy(c); h != nil {
			h.finish(raw, err)
			return
		}
		if err == nil {
			raw, err = s.sealBackendState(c, raw)
		}
		if err != nil {
			// The one place a request's Go error becomes the client's
			// (a tools/call's is the call core's, toolcall.go).
			s.respond(c, nil, rpcError(err, "", "", s.f.g.opts.Config.Server.Debug))
			return
		}
		s.respond(c, raw, nil)
	}) {
		cancel(nil)
		s.respond(c, nil, rpcError(context.Canceled, "", "", false))
		return
	}
	s.setCancel(c, cancel, "", "")
}

// callContext is the context of a call that runs in a goroutine: it
// carries the call's caller (mrtr.go), and its cancel passes the client's
// reason on to the backend it waits for (backends.Cancelled). c may be
// nil (no call of the client's).
//
// The session's end cancels the call unless it is held then (hold.go): a
// held call outlives the session that started it — over HTTP, a POST of
// 2026-07-28 — and waits for the client's retry, which another session
// brings.
func (s *session) callContext(c *call) (context.Context, backends.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(s.ctx))
	stop := context.AfterFunc(s.ctx, func() {
		if c == nil || s.heldBy(c) == nil {
			cancel(context.Canceled)
		}
	})
	if c != nil {
		cl := s.callerFor(c)
		cl.at = func(server string) { s.servedBy(c, server) }
		cl.held = func() (*session, *call) {
			if s.heldBy(c) == nil {
				return nil, nil
			}
			return s, c
		}
		ctx = withCaller(ctx, cl)
		if c.span != nil {
			ctx = trace.ContextWithSpan(ctx, c.span)
		}
	}
	return ctx, func(reason json.RawMessage) {
		stop()
		cancel(&backends.Cancelled{Reason: reason})
	}
}

// callerFor says who call c serves: a client of the per-request era by the
// capabilities it declared, one of the handshake era by how to ask it for
// input (on the call's own stream).
func (s *session) callerFor(c *call) caller {
	if c.era == wire.PerRequestEra {
		return caller{era: c.era, caps: c.caps}
	}
	return caller{ask: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if !s.f.supports(method) {
			return nil, errClientLacks(method)
		}
		return s.request(ctx, c.id, method, params)
	}}
}

// spawn runs fn in a goroutine that close waits for; after close it runs
// nothing and reports false.
func (s *session) spawn(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.wg.Add(1) // under mu, so never after close's Wait began
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// spawnCall is spawn for a goroutine that serves c: close waits for it
// while the session owns it (a hold may take it, holdOf).
func (s *session) spawnCall(c *call, fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.wg.Add(1)
	c.owned = true
	go func() {
		defer func() {
			s.mu.Lock()
			owned := c.owned
			c.owned = false
			s.mu.Unlock()
			if owned {
				s.wg.Done()
			}
		}()
		fn()
	}()
	return true
}

// heldBy returns the hold c became, if it did.
func (s *session) heldBy(c *call) *hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hold
}

// setCancel records how to cancel a call of the gateway's own, and the
// backend it went to, unless it has ended already (or, held, how the hold
// cancels it).
func (s *session) setCancel(c *call, cancel backends.CancelFunc, tool, server string) {
	s.mu.Lock()
	h := c.hold
	if s.calls[string(c.id)] == c {
		c.cancel = cancel
		c.tool = tool
		if server != "" { // else it may be known already (servedBy)
			c.server = server
		}
	}
	s.mu.Unlock()
	if h != nil {
		// Held before its cancel was known (the backend asked at once):
		// the hold is what cancels it now.
		h.mu.Lock()
		if h.cancel == nil {
			h.cancel = cancel
		}
		h.mu.Unlock()
	}
}

// callByID returns the call in flight with that id, or nil.
func (s *session) callByID(id json.RawMessage) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[string(id)]
}

// callTo returns a call to server in flight (a tools/call, prompts/get or
// resources/read), or nil. A tools/call that started before the tables
// were built is resolved now.
func (s *session) callTo(server string) *call {
	var unresolved []*call
	s.mu.Lock()
	for _, c := range s.calls {
		if c.server == server {
			s.mu.Unlock()
			return c
		}
		if c.server == "" && c.tool != "" {
			unresolved = append(unresolved, c)
		}
	}
	s.mu.Unlock()
	for _, c := range unresolved {
		if r, ok := s.f.lookupTool(c.tool); ok && r.server == server {
			return c
		}
	}
	return nil
}

// progress writes a progress notification of call c's backend call: for
// c, or, once c is held (hold.go), for the client request that stands for
// the held call now. c's own request may have been answered input_required
// by then, and a progress for it would be for a request that has ended.
// Only a call of the per-request era is ever held.
func (s *session) progress(c *call, p *mcp.ProgressNotificationParams) {
	if c.era == wire.PerRequestEra {
		if h := s.heldBy(c); h != nil {
			h.progress(p)
			return
		}
	}
	s.sendProgress(c.id, p)
}

// sendProgress writes a progress notification for the request id.
func (s *session) sendProgress(id json.RawMessage, p *mcp.ProgressNotificationParams) {
	if s.f.g.redacts() {
		p.Message, _ = safetext.MaskShapesString(p.Message) // the token is the client's own
	}
	params, err := json.Marshal(p)
	if err != nil {
		return
	}
	// Progress comes from a backend's read loop, which flushes when idle;
	// a client that reads slowly gets the latest of each token.
	token, _ := json.Marshal(p.ProgressToken)
	if err := s.s.sendLatest(id, string(token), wire.AppendRequest(nil, nil, "notifications/progress", params)); err != nil {
		s.log.Debug("write progress", "err", err)
	}
}

// cancelled handles notifications/cancelled: the call is cancelled and its
// response, whenever it comes, is not sent. A backend serving it gets the
// client's reason as the client wrote it.
func (s *session) cancelled(params json.RawMessage) {
	id := wire.Member(params, "requestId")
	if !wire.ValidID(id) {
		return
	}
	reason := bytes.Clone(wire.Member(params, "reason"))
	s.mu.Lock()
	c := s.calls[string(id)]
	var cancel backends.CancelFunc
	if c != nil {
		c.cancelled = true
		cancel = c.cancel
	}
	s.mu.Unlock()
	if cancel != nil {
		cancel(reason)
	}
}

// finish forgets a call whose response is about to be written and reports
// whether to write it. The client may reuse the id as soon as it reads the
// response, so the call is forgotten first; the response counts as being
// written until written is called.
func (s *session) finish(c *call) (send bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[string(c.id)] == c {
		delete(s.calls, string(c.id))
	}
	s.busy++
	return !c.cancelled
}

// written ends a response's write, and a drain waiting for it.
func (s *session) written() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	if s.busy == 0 && len(s.calls) == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// respond answers one of the gateway's own calls.
func (s *session) respond(c *call, result json.RawMessage, rpcErr *jsonrpc.Error) {
	defer s.written()
	if c.span != nil {
		endRequestSpan(c.span, result, rpcErr)
	}
	if !s.finish(c) {
		s.log.Debug("response dropped, request was cancelled", "id", string(c.id))
		_ = s.s.send(c.id, nil, true, false)
		return
	}
	var err error
	if rpcErr != nil {
		err = s.s.send(c.id, appendError(nil, c.id, rpcErr), true, false)
	} else {
		err = s.writeResult(c.id, s.f.result(result, c.era), false)
	}
	if err != nil {
		s.log.Debug("write response", "id", string(c.id), "err", err)
	}
}

// respondBuffered answers one of the gateway's own calls from a backend's
// read loop: the response is buffered, and goes out with the others of the
// same burst when the read loop is idle (backends.Manager.ReadIdle, which
// flushes the streams that hold something).
func (s *session) respondBuffered(c *call, result json.RawMessage) {
	defer s.written()
	if c.span != nil {
		endRequestSpan(c.span, result, nil)
	}
	if !s.finish(c) {
		s.log.Debug("response dropped, request was cancelled", "id", string(c.id))
		_ = s.s.send(c.id, nil, true, true)
		return
	}
	if err := s.writeResult(c.id, s.f.result(result, c.era), true); err != nil {
		s.log.Debug("write response", "id", string(c.id), "err", err)
	}
}

// A result of at least bigResult bytes is written in parts, straight from
// where it lies (a backend's read buffer), instead of being copied into one
// message first: a large result then costs the gateway no copy of its own
// (docs/benchmarks.md, "Large results"). Up to maxResultParts runs of it
// between whitespace; a result with more is compacted into one copy.
const (
	bigResult      = 1 << 20
	maxResultParts = 1024
)

// writeResult writes a response with result to id (goneStream.send);
// buffered: with the burst (Buffer), unless it is large: a large one goes
// out at once, so that the transport need not copy it.
func (s *session) writeResult(id, result json.RawMessage, buffered bool) error {
	if len(result) >= bigResult {
		parts, ok := wire.ResultParts(id, result, maxResultParts)
		if !ok {
			parts = [][]byte{wire.AppendResult(make([]byte, 0, len(result)+len(id)+40), id, result)}
		}
		return s.s.sendParts(id, parts)
	}
	if result == nil {
		result = json.RawMessage(`{}`) // MCP's empty result; nil would be no message at all
	}
	return s.s.Send(outMsg{result: result, id: id, final: true, hold: buffered})
}

// writeError writes an error response that answers no call in flight. It
// is called on the reader only, which ends the request's span with it.
func (s *session) writeError(id json.RawMessage, e *jsonrpc.Error) {
	if sp := s.pending; sp != nil {
		s.pending = nil
		endRequestSpan(sp, nil, e)
	}
	if err := s.s.send(id, appendError(nil, id, e), true, false); err != nil {
		s.log.Debug("write error reply", "err", err)
	}
}

// reject answers input that is not a JSON-RPC message.
func (s *session) reject(de *wire.DecodeError) {
	e := errInvalidRequest(de.Reason)
	if de.Parse {
		e = errParse(de.Reason)
	}
	s.log.Warn("bad input", "code", e.Code, "reason", de.Reason)
	s.writeError(de.ID, e)
}

// drain waits, up to drainGrace, until every request read so far has been
// answered. A client that writes its requests and closes its end (a
// script, a pipe) still gets its answers. Closing the session ends the wait.
func (s *session) drain() {
	s.mu.Lock()
	if len(s.calls) == 0 && s.busy == 0 {
		s.mu.Unlock()
		return
	}
	s.drained = make(chan struct{})
	done := s.drained
	n := len(s.calls)
	s.mu.Unlock()
	s.log.Debug("end of input; waiting for calls in flight", "calls", n)
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go s.drainWaitGone(stop) // a client that left entirely is not waited for
	select {
	case <-done:
	case <-t.C:
		s.log.Warn("end of input; calls still in flight are abandoned", "after", drainGrace)
	case <-s.closed:
	case <-s.gone.ch:
	}
}

func (s *session) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// close ends the session: no call starts after it, the calls in flight are
// cancelled and waited for, and later writes fail. It is idempotent.
func (s *session) close() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	close(s.closed)
	var cancels []backends.CancelFunc
	for _, c := range s.calls {
		if c.cancel != nil {
			cancels = append(cancels, c.cancel)
		}
	}
	s.mu.Unlock()
	s.stop()
	for _, cancel := range cancels {
		cancel(nil)
	}
	s.wg.Wait()
	_ = s.s.Send(outMsg{}) // responses buffered by a backend's read loop that has not gone idle yet
	_ = s.s.Close()
}

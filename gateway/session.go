package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The session is the one owner of a client connection's requests. It reads
// every message, decodes its envelope once (package wire, ids kept as the
// client's exact bytes), keeps the one table of requests in flight, and
// serves every tools/call itself — backend tools, answer tools, lazy mode's
// meta tools, and the error before initialize — as well as the lists,
// prompts/get, resources/read, completion and tasks, raw. Everything else
// (initialize, ping, list_changed, logging/setLevel, subscriptions) goes to
// go-sdk, under ids of the session's own, mapped back to the client's on
// the way out. It depends on no transport: a transport only moves whole messages
// (clientStream).

// clientStream is a client connection as the session sees it: whole
// messages in and out. The stdio transport is one.
type clientStream interface {
	// Read returns the next message (owned by the caller), or, for input
	// that is not one, why (answered with -32700). err ends the input:
	// io.EOF at its end. It is called from one goroutine. Before it waits
	// for input it calls wait (when not nil), on the calling goroutine.
	Read(wait func()) (msg []byte, bad string, err error)
	// Write writes one whole message, after those Buffer holds; it is safe
	// for concurrent use.
	Write(msg []byte) error
	// WriteParts is Write of the message the parts make one after the
	// other; a transport that can writes them without joining them.
	WriteParts(parts ...[]byte) error
	// Buffer queues a message for the next Write or Flush.
	Buffer(msg []byte) error
	// Flush writes what Buffer holds.
	Flush() error
	// BufferLatest is Buffer for a message a later one of the same key
	// makes obsolete (a call's progress): a stream may keep only the latest
	// per key while the client reads slowly, rather than wait or queue all.
	BufferLatest(key string, msg []byte) error
	// Close makes later Writes fail.
	Close() error
}

// callStreams is implemented by a client stream with a way out per request
// (Streamable HTTP: the response stream of the POST that sent it), where
// everything that belongs to a request goes: its progress, the requests
// made to the client while serving it, and its response.
type callStreams interface {
	// WriteFor writes msg, which belongs to the client's request id: its
	// response if final (nothing follows it; msg is nil when the response
	// is suppressed), else a message sent while serving it. A key, if not
	// "", says that a later message of the same key makes msg obsolete (a
	// call's progress), as for BufferLatest.
	WriteFor(id json.RawMessage, key string, msg []byte, final bool) error
}

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

	toSDK   chan jsonrpc.Message // reader → go-sdk's Read, unbuffered
	inputOK chan struct{}        // closed when the input has ended and the calls in flight are answered
	readErr error                // why the input ended; set before inputOK is closed
	closed  chan struct{}

	mu      sync.Mutex
	done    bool                     // set by close: no call starts after it
	calls   map[string]*call         // the one table of requests in flight, by the id's exact bytes
	sdk     map[int64]*call          // the requests go-sdk serves, by the id go-sdk knows them by
	nextSDK int64                    // last id given to go-sdk
	out     map[string]chan outReply // the session's own requests to the client, by id (outgoing.go)
	nextOut int64
	busy    int            // responses being written
	drained chan struct{}  // closed when calls and busy are both empty, during a drain
	wg      sync.WaitGroup // goroutines of calls that may wait (spawn)

	gone clientGone // the client cannot be written to: the session ends
}

// call is one request in flight.
type call struct {
	id        json.RawMessage     // exactly as the client sent it
	sdkID     int64               // non-zero: go-sdk serves it under this id
	cancel    backends.CancelFunc // the gateway's own calls; set once started
	server    string              // the backend a tools/call went to, if known when it started
	tool      string              // the tool a tools/call called; set once started
	cancelled bool                // the client sent notifications/cancelled: no response
	answered  chan struct{}       // if not nil, closed once the response is written
	// initialize: go-sdk's answer is completed with the backends' (initialize.go).
	initialize bool
}

func newSession(f *front, s clientStream) *session {
	ctx, stop := context.WithCancel(context.Background())
	ss := &session{
		f:       f,
		log:     f.log,
		ctx:     ctx,
		stop:    stop,
		toSDK:   make(chan jsonrpc.Message),
		inputOK: make(chan struct{}),
		closed:  make(chan struct{}),
		calls:   make(map[string]*call),
		sdk:     make(map[int64]*call),
		out:     make(map[string]chan outReply),
	}
	ss.gone.ch = make(chan struct{})
	ss.s = goneStream{clientStream: s, onFail: ss.writeFailed}
	return ss
}

// readLoop reads the client until the end of input, then waits for the
// calls in flight (drain) and tells go-sdk. After close it delivers nothing
// more; it exits when the current Read returns.
func (s *session) readLoop() {
	for {
		// The calls started from buffered input are held back and
		// written to their backends together, before Read waits.
		msg, bad, err := s.s.Read(s.flushBackends)
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
		if bad != "" {
			s.reject(&wire.DecodeError{Parse: true, Reason: bad})
			continue
		}
		s.handle(msg)
	}
}

// handle routes one message.
func (s *session) handle(body []byte) {
	m, err := wire.Decode(body)
	if err != nil {
		var de *wire.DecodeError
		if !errors.As(err, &de) {
			de = &wire.DecodeError{Reason: err.Error()}
		}
		s.reject(de)
		return
	}
	switch {
	case m.IsCall():
		switch m.Method {
		case "tools/call":
			s.startToolCall(m.ID, m.Params)
			return
		case methodDiscover:
			s.writeError(m.ID, errNoDiscover)
			return
		case methodComplete:
			s.startRequest(m.ID, m.Method, m.Params, s.f.complete)
			return
		case "prompts/get":
			s.startRequest(m.ID, m.Method, m.Params, s.f.getPrompt)
			return
		case "resources/read":
			s.startRequest(m.ID, m.Method, m.Params, s.f.readResource)
			return
		case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list":
			method := m.Method
			s.startRequest(m.ID, method, m.Params, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
				return s.f.task(ctx, method, params)
			})
			return
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			method := m.Method
			s.startRequest(m.ID, method, m.Params, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
				return s.f.list(ctx, method, params)
			})
			return
		}
		c, ok := s.claim(m.ID, true)
		if !ok {
			return
		}
		if m.Method == "initialize" {
			// Nothing is served until the session is initialized: a
			// client may send its first calls right behind initialize.
			c.answered = make(chan struct{})
			c.initialize = true
			if b := s.f.g.opts.Backends; b != nil {
				// Backends waiting for the client are told what it can do.
				b.SetClientCapabilities(wire.Member(m.Params, "capabilities"))
			}
		}
		s.deliver(&jsonrpc.Request{ID: intID(c.sdkID), Method: m.Method, Params: m.Params})
		if c.answered != nil {
			select {
			case <-c.answered:
			case <-s.closed:
			}
		}
	case m.IsNotification():
		if m.Method == methodCancelled {
			s.cancelled(m.Params)
			return
		}
		if m.Method == methodRootsChanged {
			s.f.rootsChanged(m.Params)
		}
		s.deliver(&jsonrpc.Request{Method: m.Method, Params: m.Params})
	default:
		if s.reply(&m) {
			return // the answer to a backend's request (outgoing.go)
		}
		// The client's answer to a request of go-sdk's.
		id, ok := sdkRequestID(m.ID)
		if !ok {
			s.log.Debug("dropped a response to an unknown id", "id", string(m.ID))
			return
		}
		resp := &jsonrpc.Response{ID: id, Result: m.Result}
		if m.Error != nil {
			var e jsonrpc.Error
			if err := json.Unmarshal(m.Error, &e); err != nil {
				e = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "invalid error object"}
			}
			resp.Error = &e
		}
		s.deliver(resp)
	}
}

const (
	methodCancelled    = "notifications/cancelled"
	methodRootsChanged = "notifications/roots/list_changed"
)

// sdkRequestID reads the id of a response to one of go-sdk's requests,
// which go-sdk numbered itself.
func sdkRequestID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, false
		}
		id, _ := jsonrpc.MakeID(s)
		return id, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	return intID(n), true
}

// intID is a go-sdk id for n, which is well below 2^53.
func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// flushBackends writes the calls started since the last flush to their
// backends, in one write each (backends.CallOptions.Batch). The reader
// calls it before anything that may wait.
func (s *session) flushBackends() {
	if b := s.f.g.opts.Backends; b != nil {
		b.FlushWrites()
	}
}

// deliver hands a message to go-sdk's Read, which may wait.
func (s *session) deliver(msg jsonrpc.Message) {
	s.flushBackends()
	select {
	case s.toSDK <- msg:
	case <-s.closed:
	}
}

// claim records a request in flight. A request id already in flight is
// answered with -32600 and not claimed: the call in flight keeps its id
// and its entry. A request for go-sdk (sdk) gets an id for it.
func (s *session) claim(id json.RawMessage, sdk bool) (*call, bool) {
	s.mu.Lock()
	if _, dup := s.calls[string(id)]; dup || s.done {
		s.mu.Unlock()
		if dup {
			s.writeError(id, errDuplicateID)
		}
		return nil, false
	}
	c := &call{id: id}
	if sdk {
		s.nextSDK++
		c.sdkID = s.nextSDK
		s.sdk[c.sdkID] = c
	}
	s.calls[string(id)] = c
	s.mu.Unlock()
	return c, true
}

// startToolCall serves a tools/call. A call to a backend tool in the
// current tables starts right here, on the reader, and is answered from
// the backend's read loop: no goroutine of its own, no hand-off (the
// backend's writes never block, see backends.Manager.StartToolCall).
// Anything that may wait — the answer and meta tools, a name not in the
// tables yet (the backends may still be starting) — runs in a goroutine.
func (s *session) startToolCall(id, params json.RawMessage) {
	c, ok := s.claim(id, false)
	if !ok {
		return
	}
	f := s.f
	tc, err := decodeToolCall(params)
	if err != nil {
		s.respond(c, nil, rpcError(err, kindTool, "", false))
		return
	}
	if e := f.notReady(tc.meta); e != nil {
		s.respond(c, nil, e)
		return
	}
	tc.id = c.id
	record := f.recorder(tc) // nil unless metrics, the audit log or redaction are on
	progress := func(p *mcp.ProgressNotificationParams) { s.progress(c.id, p) }
	if r, ok := f.inlineRoute(tc.name); ok {
		name := tc.name // the closure keeps the name only, not the whole toolCall
		cancel := f.startBackend(name, r, tc, progress, func(raw json.RawMessage, err error) {
			s.finishCall(c, name, record, raw, err, true)
		})
		s.setCancel(c, cancel, tc.name, r.server)
		return
	}
	ctx, cancel := s.callContext()
	if !s.spawn(func() {
		defer cancel(nil)
		raw, err := f.callTool(ctx, tc, progress)
		s.finishCall(c, tc.name, record, raw, err, false)
	}) {
		cancel(nil)
		s.respond(c, nil, rpcError(context.Canceled, kindTool, tc.name, false))
		return
	}
	s.setCancel(c, cancel, tc.name, "")
}

// startRequest serves a request other than tools/call that the session
// forwards raw (completion/complete) in a goroutine of its own.
func (s *session) startRequest(id json.RawMessage, method string, params json.RawMessage, serve func(context.Context, json.RawMessage) (json.RawMessage, error)) {
	c, ok := s.claim(id, false)
	if !ok {
		return
	}
	if s.f.notReady(nil) != nil {
		s.respond(c, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("method %q is invalid during session initialization", method)})
		return
	}
	ctx, cancel := s.callContext()
	if !s.spawn(func() {
		defer cancel(nil)
		raw, err := serve(ctx, params)
		if err != nil {
			s.respond(c, nil, rpcError(err, "", "", false))
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

// callContext is the context of a call that runs in a goroutine: its
// cancel passes the client's reason on to the backend it waits for
// (backends.Cancelled).
func (s *session) callContext() (context.Context, backends.CancelFunc) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	return ctx, func(reason json.RawMessage) { cancel(&backends.Cancelled{Reason: reason}) }
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

// setCancel records how to cancel a call of the gateway's own, and the
// backend it went to, unless it has ended already.
func (s *session) setCancel(c *call, cancel backends.CancelFunc, tool, server string) {
	s.mu.Lock()
	if s.calls[string(c.id)] == c {
		c.cancel = cancel
		c.tool = tool
		c.server = server
	}
	s.mu.Unlock()
}

// callTo returns the id of a tools/call to server in flight, or nil. A
// call that started before the tables were built is resolved now.
func (s *session) callTo(server string) json.RawMessage {
	type pending struct {
		id   json.RawMessage
		tool string
	}
	var unresolved []pending
	s.mu.Lock()
	for _, c := range s.calls {
		if c.server == server {
			s.mu.Unlock()
			return c.id
		}
		if c.server == "" && c.tool != "" {
			unresolved = append(unresolved, pending{c.id, c.tool})
		}
	}
	s.mu.Unlock()
	for _, u := range unresolved {
		if r, ok := s.f.lookupTool(u.tool); ok && r.server == server {
			return u.id
		}
	}
	return nil
}

// progress writes a progress notification for the call id.
func (s *session) progress(id json.RawMessage, p *mcp.ProgressNotificationParams) {
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
	switch {
	case c == nil:
	case c.sdkID == 0:
		if cancel != nil {
			cancel(reason)
		}
	default:
		// go-sdk cancels its handler under the id it knows.
		p, _ := json.Marshal(map[string]any{"requestId": c.sdkID})
		s.deliver(&jsonrpc.Request{Method: methodCancelled, Params: p})
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
	if c.sdkID != 0 {
		delete(s.sdk, c.sdkID)
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

// finishCall answers a tools/call with its result or its error mapped to
// JSON-RPC, and records it for metrics (record may be nil). buffered: the
// answer comes from a backend's read loop and goes out with its burst.
func (s *session) finishCall(c *call, name string, record callEnd, raw json.RawMessage, err error, buffered bool) {
	if err != nil {
		e := rpcError(err, kindTool, name, s.f.g.opts.Config.Server.Debug)
		if record != nil {
			_, e = record(nil, e)
		}
		s.respond(c, nil, e)
		return
	}
	if record != nil {
		raw, _ = record(raw, nil)
	}
	if buffered {
		s.respondBuffered(c, raw)
	} else {
		s.respond(c, raw, nil)
	}
}

// respond answers one of the gateway's own calls.
func (s *session) respond(c *call, result json.RawMessage, rpcErr *jsonrpc.Error) {
	defer s.written()
	if !s.finish(c) {
		s.log.Debug("response dropped, request was cancelled", "id", string(c.id))
		_ = s.s.send(c.id, nil, true, false)
		return
	}
	var err error
	if rpcErr != nil {
		err = s.s.send(c.id, appendError(nil, c.id, rpcErr), true, false)
	} else {
		err = s.writeResult(c.id, result, false)
	}
	if err != nil {
		s.log.Debug("write response", "id", string(c.id), "err", err)
	}
}

// respondBuffered answers one of the gateway's own calls from a backend's
// read loop: the response is buffered, and goes out with the others of the
// same burst when the read loop is idle (Gateway.flushClients).
func (s *session) respondBuffered(c *call, result json.RawMessage) {
	defer s.written()
	if !s.finish(c) {
		s.log.Debug("response dropped, request was cancelled", "id", string(c.id))
		_ = s.s.send(c.id, nil, true, true)
		return
	}
	if err := s.writeResult(c.id, result, true); err != nil {
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
	return s.s.send(id, wire.AppendResult(make([]byte, 0, len(result)+len(id)+40), id, result), true, buffered)
}

// writeError writes an error response that answers no call in flight.
func (s *session) writeError(id json.RawMessage, e *jsonrpc.Error) {
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
	_ = s.s.Flush() // responses buffered by a backend's read loop that has not gone idle yet
	_ = s.s.Close()
}

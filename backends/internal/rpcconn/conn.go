// Package rpcconn is the gateway's JSON-RPC 2.0 client connection to one
// backend: requests and their responses (kept as the exact bytes the
// backend wrote), progress, cancellation both ways, per-call timeouts, the
// backend's own requests, and a write side that never blocks its caller
// (connwrite.go). It knows nothing of MCP's lifecycle: what a request
// carries beyond its params (the _meta of the per-request era) comes from
// Hooks.Stamp, and the session that owns a Conn decides when it ends.
package rpcconn

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one message on a backend's stdout (wire.MaxMessage).
const maxLine = wire.MaxMessage

// ErrTimeout ends a call whose own timeout (CallOptions.Timeout) fired.
var ErrTimeout = errors.New("call timed out")

// Hooks are the parts of a Conn that its owner supplies; each may be nil.
type Hooks struct {
	// Notify receives every notification except notifications/progress and
	// notifications/cancelled, which the Conn handles itself. It runs in the
	// read loop and must not block; params point into the read buffer and
	// are valid only during the call.
	Notify func(method string, params json.RawMessage)
	// Request answers a server-to-client request (nil: -32601). A
	// *jsonrpc.Error keeps its code; any other error is -32603.
	Request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Idle is flushed by the read loop each time it has handled all it
	// read, before it reads again: the writers that held back what the
	// loop's handlers gave them (a call's done, progress, a notification)
	// marked themselves in it, and only they are flushed.
	Idle *flush.Set
	// Stamp, if set, returns a request's params as they go out: caps are
	// CallOptions.Caps. It runs on the caller's goroutine of every Start.
	Stamp func(params, caps json.RawMessage) json.RawMessage
}

// Options configure a Conn.
type Options struct {
	Log *slog.Logger // the backend's logger
	// Pipe is the capacity of the pipe the Conn writes to (PipeCapacity),
	// the bound of inline writes (connwrite.go). The zero PipeCap is for a
	// writer whose Write only queues: every write may be inline.
	Pipe  PipeCap
	Hooks Hooks
}

// Conn is a JSON-RPC 2.0 client over a backend's stdin and stdout, one
// message per line. Results are kept as the exact bytes the backend wrote.
//
// Its read loop (ReadLoop) ends at stdout EOF and then closes EOF(); the
// owner decides why the session ended and calls Shutdown, which fails every
// pending call with that error. Calls never outlive Shutdown.
type Conn struct {
	log   *slog.Logger
	hooks Hooks
	bufs  Buffers // what messages are built in (encode)

	w io.WriteCloser // the child's stdin, or a remote transport (internal/remote)

	// The write side (connwrite.go).
	wmu     sync.Mutex
	wclosed bool // set by Shutdown: nothing more is sent
	// droppedReplies counts replies to the backend's requests dropped
	// over maxReplyBacklog (wmu).
	droppedReplies int
	writing        bool          // a write to w is under way (inline or the writer's)
	queue          []byte        // messages waiting for the writer goroutine
	held           []byte        // messages waiting for Flush (CallOptions.Batch)
	spare          []byte        // a buffer for held, reused
	writerUp       bool          // the writer goroutine runs
	wake           chan struct{} // wakes the writer goroutine
	sent           int64         // bytes sent (written, queued or held) so far
	consumed       int64         // bytes the backend has surely read
	writes         []pipeWrite   // writes not known to be read, oldest first (Linux)
	slots          int64         // pipe slots they may take
	pipeBytes      int64         // capacity of w's pipe
	pipePage       int64         // bytes per pipe slot
	pipeSlots      int64         // slots of w's pipe; 0: no slots to count

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]*pending
	progress  map[string]*progressSink
	handling  map[string]context.CancelFunc // server-to-client requests in flight, by raw id
	deadlines deadlines                     // of the calls in pending that have a timeout
	err       error                         // set by Shutdown

	eof chan struct{} // closed when ReadLoop has returned

	warnedUTF8 bool          // ReadLoop's: invalid UTF-8 was reported once
	eofReason  string        // why ReadLoop stopped before EOF; read after eof
	done       chan struct{} // closed by Shutdown

	ctx    context.Context // cancelled by Shutdown; parent of request handlers
	cancel context.CancelFunc
	wg     sync.WaitGroup // request handlers and the writer goroutine
}

// progressSink delivers a call's progress; closing it (when the call
// returns) waits for a delivery in progress, so none comes after.
type progressSink struct {
	mu     sync.Mutex
	fn     func(*mcp.ProgressNotificationParams)
	closed bool
}

func (p *progressSink) deliver(n *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.fn(n)
	}
}

func (p *progressSink) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// pending is one request awaiting the backend's response. It ends exactly
// once (finish): with the response, at its timeout, when cancelled, or at
// shutdown.
type pending struct {
	c     *Conn
	id    int64
	end   int64 // the request's end offset in the stream (connwrite.go)
	done  func(json.RawMessage, error)
	sink  *progressSink
	token string
	ended bool // guarded by c.mu

	// Its place among the calls waiting for their deadline (c.mu,
	// deadlines.go).
	deadline   time.Time
	prev, next *pending
	listed     bool
}

// New returns a Conn that writes to w (a backend's stdin, or a transport
// whose Write only queues). Its read side starts with ReadLoop.
func New(w io.WriteCloser, o Options) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Pipe == (PipeCap{}) {
		o.Pipe = PipeCap{bytes: math.MaxInt64 / 2, page: 1}
	}
	c := &Conn{
		pipeBytes: o.Pipe.bytes,
		pipePage:  o.Pipe.page,
		pipeSlots: o.Pipe.slots,
		log:       log,
		hooks:     o.Hooks,
		w:         w,
		wake:      make(chan struct{}, 1),
		pending:   make(map[int64]*pending),
		progress:  make(map[string]*progressSink),
		handling:  make(map[string]context.CancelFunc),
		eof:       make(chan struct{}),
		done:      make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
	}
	c.deadlines.fire = c.timeouts
	return c
}

// ReadLoop reads r until EOF or an error and dispatches each message. Lines
// that are not JSON objects (banners, npm notices) are dropped with a
// warning. It closes EOF() when it returns.
func (c *Conn) ReadLoop(r io.Reader) {
	defer close(c.eof)
	br := bufio.NewReaderSize(r, 64<<10)
	var long longLine // a line longer than br's buffer, being assembled
	for {
		if br.Buffered() == 0 && c.hooks.Idle != nil {
			c.hooks.Idle.Flush() // everything read is handled; the next read may wait
		}
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long.add(frag)
			if long.len() > maxLine {
				c.eofReason = fmt.Sprintf("wrote a line over %d MiB on stdout", maxLine>>20)
				c.log.Warn("backend wrote a line over the size limit on stdout; ending the session", "limit", maxLine)
				return
			}
			continue
		}
		line := frag
		if long.len() > 0 {
			line = long.line(frag)
		}
		if len(line) > 0 {
			c.handleLine(line) // keeps no reference to line
		}
		long.reset()
		if err != nil {
			if err != io.EOF && !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
				c.eofReason = "stdout: " + err.Error()
				c.log.Debug("backend stdout read error", "err", err)
			}
			return
		}
	}
}

// EOF is closed when ReadLoop has returned.
func (c *Conn) EOF() <-chan struct{} { return c.eof }

// EOFReason says why ReadLoop stopped before the end of its input ("" for
// the end itself); it waits for EOF().
func (c *Conn) EOFReason() string {
	<-c.eof
	return c.eofReason
}

// Context is cancelled by Shutdown.
func (c *Conn) Context() context.Context { return c.ctx }

// handleLine decodes one line with the envelope codec the gateway's client
// side uses (package wire). line is reused after handleLine returns: what
// outlives it is copied.
func (c *Conn) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] != '{' {
		c.log.Warn("dropped a non-JSON line on backend stdout", "line", truncate(line, 200))
		return
	}
	msg, err := wire.Decode(line) // checks UTF-8 too: the repair below costs nothing when valid
	if err != nil && !utf8.Valid(line) {
		// The client's decoder may be strict (the gateway's own is, on
		// client input): each run of invalid bytes becomes U+FFFD, which keeps
		// the JSON valid (such bytes can only stand inside a string).
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
		if !c.warnedUTF8 {
			c.warnedUTF8 = true
			c.log.Warn("backend wrote invalid UTF-8; replaced with U+FFFD")
		}
		msg, err = wire.Decode(line)
	}
	if err != nil {
		c.log.Warn("dropped a line that is not a JSON-RPC message", "err", err, "line", truncate(line, 200))
		return
	}
	switch {
	case msg.IsCall():
		c.handleRequest(bytes.Clone(msg.ID), msg.Method, bytes.Clone(msg.Params))
	case msg.IsNotification():
		c.handleNotification(msg.Method, msg.Params)
	default:
		c.handleResponse(msg)
	}
}

func (c *Conn) handleResponse(msg wire.Message) {
	// The gateway's ids are integers; a backend that echoes one as a
	// string ("5") is answered all the same rather than left to time out.
	raw := strings.Trim(string(msg.ID), `"`)
	id, err := strconv.ParseInt(raw, 10, 64)
	var p *pending
	if err == nil {
		c.mu.Lock()
		p = c.pending[id]
		c.mu.Unlock()
	}
	if p == nil {
		// A late answer to a call that timed out or was cancelled, or a
		// backend that mangles ids.
		c.log.Debug("ignored a response to an unknown id", "id", string(msg.ID))
		return
	}
	c.consumedUpTo(&p.end)
	if msg.Error != nil {
		e := new(jsonrpc.Error)
		if err := json.Unmarshal(msg.Error, e); err != nil {
			e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "invalid error object from the backend"}
		}
		p.finish(nil, e)
		return
	}
	p.finish(msg.Result, nil) // the result points into the read buffer: done copies what it keeps
}

func (c *Conn) handleNotification(method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(params, &p); err != nil {
			c.log.Debug("bad progress notification", "err", err)
			return
		}
		tok, _ := p.ProgressToken.(string)
		c.mu.Lock()
		sink := c.progress[tok]
		c.mu.Unlock()
		if sink == nil {
			c.log.Debug("progress for an unknown token", "token", p.ProgressToken)
			return
		}
		p.ProgressToken = nil
		sink.deliver(&p)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &p) == nil {
			c.mu.Lock()
			cancel := c.handling[string(p.RequestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	default:
		if c.hooks.Notify != nil {
			c.hooks.Notify(method, params)
		}
	}
}

// handleRequest answers a server-to-client request in its own goroutine,
// which ends when the handler returns; shutdown cancels its context.
// Bounds on what a backend's own requests may cost (docs/configuration.md,
// "Limits"): at most maxBackendRequests are handled at once (beyond, each
// is answered with an error at once); ping is answered on the read loop
// without a goroutine; and while the backend reads nothing, replies to its
// requests wait in memory up to maxReplyBacklog bytes and are dropped
// beyond (a backend flooding requests it does not read the answers to).
const (
	maxBackendRequests = 64
	maxReplyBacklog    = 1 << 20
	codeTooMany        = -32000 // JSON-RPC's server-error range
)

func (c *Conn) handleRequest(id json.RawMessage, method string, params json.RawMessage) {
	if method == "ping" {
		c.reply(id, json.RawMessage("{}"), nil)
		return
	}
	key := string(id)
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		cancel()
		return
	}
	var refuse *jsonrpc.Error
	switch {
	case c.handling[key] != nil:
		// Its answer and a cancellation could not tell the two apart.
		refuse = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate request id " + truncate(id, 40) + " in flight"}
	case len(c.handling) >= maxBackendRequests:
		refuse = &jsonrpc.Error{Code: codeTooMany, Message: fmt.Sprintf("too many requests in flight from this server (limit %d)", maxBackendRequests)}
	}
	if refuse != nil {
		c.mu.Unlock()
		cancel()
		c.reply(id, nil, refuse)
		return
	}
	c.handling[key] = cancel
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		var (
			result json.RawMessage
			err    error
		)
		if c.hooks.Request == nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
		} else {
			result, err = c.hooks.Request(ctx, method, params)
		}
		cancelled := ctx.Err() != nil && c.ctx.Err() == nil
		// The id is free again before the answer goes: a backend may
		// reuse it as soon as it has the answer.
		c.mu.Lock()
		delete(c.handling, key)
		c.mu.Unlock()
		cancel()
		if cancelled {
			return // the backend cancelled it: no response is sent
		}
		c.reply(id, result, err)
	}()
}

// reply answers the backend's request id with result or err.
func (c *Conn) reply(id, result json.RawMessage, err error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	if err == nil {
		if result == nil {
			result = json.RawMessage("{}")
		}
		var v json.RawMessage
		if v, err = wire.Compact(result); err == nil {
			buf.WriteString(`,"result":`)
			buf.Write(v)
			buf.WriteString("}\n")
		} else {
			err = fmt.Errorf("invalid result from the request handler: %w", err)
			buf.Reset()
			buf.WriteString(`{"jsonrpc":"2.0","id":`)
			buf.Write(id)
		}
	}
	if err != nil {
		werr := wireErrorOf(err)
		b, _ := json.Marshal(werr)
		buf.WriteString(`,"error":`)
		buf.Write(b)
		buf.WriteString("}\n")
	}
	c.sendReply(buf.Bytes())
}

// wireErrorOf turns a request handler's error into a JSON-RPC error,
// keeping the code of a *jsonrpc.Error.
func wireErrorOf(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// Notify sends a notification; params must be compact JSON or nil. It
// never blocks (connwrite.go); it fails only after Shutdown.
func (c *Conn) Notify(method string, params json.RawMessage) error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.sendRequest(0, method, params, nil, nil)
	return nil
}

// sendRequest sends a request (id > 0) or a notification (id 0) as one
// line (send), built in a buffer of c.bufs that is free again once send
// has copied or written it; params must be compact JSON or nil. The
// gateway's ids start at 1.
func (c *Conn) sendRequest(id int64, method string, params json.RawMessage, end *int64, batch *flush.Set) {
	var idJSON json.RawMessage
	var digits [20]byte
	if id > 0 {
		idJSON = strconv.AppendInt(digits[:0], id, 10)
	}
	buf := c.bufs.Get()
	*buf = append(wire.AppendRequest(*buf, idJSON, method, params), '\n')
	c.send(*buf, end, batch)
	c.bufs.Put(buf)
}

// CallOptions are the per-call settings of Start and Call.
type CallOptions struct {
	// Batch, if set, lets the request wait in a buffer until Batch is
	// flushed: the Conn marks itself in it when it starts holding.
	Batch   *flush.Set
	Timeout time.Duration // 0: none
	// Progress receives the call's progress (its token cleared) until the
	// call ends, never after; Token is the progress token the params carry.
	Progress func(*mcp.ProgressNotificationParams)
	Token    string
	// Caps are handed to Hooks.Stamp: for a backend of the per-request era,
	// the capabilities of the client the call is for (nil: the session's).
	Caps json.RawMessage
}

// Start sends a request and returns at once; done receives the raw result
// or the error, exactly once: the response (its result points into the
// read buffer and is valid only during done; a JSON-RPC error is a
// *jsonrpc.Error), ErrTimeout at o.Timeout (the backend is sent
// notifications/cancelled), context.Canceled when the returned cancel is
// called (likewise), or the Shutdown error. done may run before Start
// returns, in the backend's read loop, or on a timer's goroutine; it must
// not block for long. params must be compact JSON (or nil).
func (c *Conn) Start(method string, params json.RawMessage, o CallOptions, done func(json.RawMessage, error)) (cancel func(reason json.RawMessage)) {
	p := &pending{c: c, done: done}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		done(nil, err)
		return func(json.RawMessage) {}
	}
	c.nextID++
	p.id = c.nextID
	c.pending[p.id] = p
	if o.Progress != nil {
		p.sink = &progressSink{fn: o.Progress}
		p.token = o.Token
		c.progress[o.Token] = p.sink
	}
	c.mu.Unlock()
	if c.hooks.Stamp != nil {
		params = c.hooks.Stamp(params, o.Caps)
	}
	c.sendRequest(p.id, method, params, &p.end, o.Batch)
	if o.Timeout > 0 {
		// Only now: a timeout's cancellation must not reach the backend
		// before the request it cancels.
		c.mu.Lock()
		if !p.ended {
			c.deadlines.add(p, o.Timeout)
		}
		c.mu.Unlock()
	}
	return func(reason json.RawMessage) { p.abort(context.Canceled, reason) }
}

// The reasons the gateway gives a backend when it cancels on its own: a
// call that timed out, and a call whose context ended without a client's
// reason (the client went away, the gateway stops).
const (
	reasonTimeout = `"timeout"`
	reasonGateway = `"cancelled by the client"`
)

// timeouts ends the calls whose deadline has passed (the deadlines'
// timer).
func (c *Conn) timeouts() {
	c.mu.Lock()
	due := c.deadlines.due(time.Now())
	c.mu.Unlock()
	for _, p := range due {
		p.abort(ErrTimeout, json.RawMessage(reasonTimeout))
	}
}

// abort ends the call with err and tells the backend, if it was still
// pending; reason is the notification's reason (a JSON value, as the client
// wrote it), nil for none. A reason that is not JSON is left out.
func (p *pending) abort(err error, reason json.RawMessage) {
	if !p.finish(nil, err) {
		return
	}
	params := bytes.NewBuffer(strconv.AppendInt(append(make([]byte, 0, 48+len(reason)), `{"requestId":`...), p.id, 10))
	if len(reason) > 0 {
		// Compacted: a client may have written it over several lines,
		// and each line would reach the backend as a message.
		if r, err := wire.Compact(reason); err == nil {
			params.WriteString(`,"reason":`)
			params.Write(r)
		}
	}
	params.WriteByte('}')
	_ = p.c.Notify("notifications/cancelled", params.Bytes())
}

// finish ends the call once, and reports whether this was the time.
func (p *pending) finish(result json.RawMessage, err error) bool {
	c := p.c
	c.mu.Lock()
	if p.ended {
		c.mu.Unlock()
		return false
	}
	p.ended = true
	delete(c.pending, p.id)
	if p.sink != nil {
		delete(c.progress, p.token)
	}
	c.deadlines.remove(p)
	c.mu.Unlock()
	if p.sink != nil {
		p.sink.close() // waits for a delivery in progress: no progress after done
	}
	if err != nil {
		p.done(nil, err)
	} else {
		p.done(result, nil)
	}
	return true
}

// Call sends a request and waits for its response, the timeout, ctx, or
// Shutdown (see Start); it returns a copy of the result. On ctx's end the
// backend is sent notifications/cancelled and ctx's error is returned.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage, o CallOptions) (json.RawMessage, error) {
	return Await(ctx, func(done func(json.RawMessage, error)) func(json.RawMessage) {
		return c.Start(method, params, o, done)
	})
}

// A Reasoner is the cause of a context cancelled on a client's behalf
// (context.WithCancelCause): a call waiting on that context tells the
// backend the client's own reason (a JSON value; nil for none).
type Reasoner interface {
	CancelReason() json.RawMessage
}

// Await runs an asynchronous call to its end, or until ctx ends (then it
// cancels the call, with the client's reason when ctx's cause is a
// Reasoner, and returns ctx's error). It copies the result.
func Await(ctx context.Context, start func(done func(json.RawMessage, error)) (cancel func(reason json.RawMessage))) (json.RawMessage, error) {
	type outcome struct {
		res json.RawMessage
		err error
	}
	ch := make(chan outcome, 1)
	cancel := start(func(res json.RawMessage, err error) { ch <- outcome{bytes.Clone(res), err} })
	select {
	case r := <-ch:
		return r.res, r.err
	case <-ctx.Done():
		reason := json.RawMessage(reasonGateway)
		if r, ok := context.Cause(ctx).(Reasoner); ok {
			reason = r.CancelReason()
		}
		cancel(reason)
		return nil, ctx.Err()
	}
}

// InFlight is the number of calls awaiting their response.
func (c *Conn) InFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Shutdown ends the session: every pending and later call fails with err,
// queued writes are dropped, request handlers are cancelled. It does not
// close the pipes (the process owner does) and may be called more than
// once; the first error wins.
func (c *Conn) Shutdown(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.deadlines.stop()
	calls := make([]*pending, 0, len(c.pending))
	for _, p := range c.pending {
		calls = append(calls, p)
	}
	c.mu.Unlock()
	c.wmu.Lock()
	c.wclosed = true
	c.queue, c.held = nil, nil
	c.wmu.Unlock()
	close(c.done)
	c.cancel()
	for _, p := range calls {
		p.finish(nil, err)
	}
}

// Wait waits for the Conn's goroutines (request handlers, the writer)
// after Shutdown and after the child's stdin was closed.
func (c *Conn) Wait() { c.wg.Wait() }

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

package backends

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one message on a backend's stdout. A longer line is a
// protocol violation; the session is ended (the backend is treated as
// crashed) rather than letting one child exhaust the gateway's memory.
const maxLine = 256 << 20

// errCallTimeout is returned by conn.call when the call's own timeout fires.
var errCallTimeout = errors.New("call timed out")

// connHooks are the parts of a conn that its backend supplies.
type connHooks struct {
	// notify receives every notification except notifications/progress and
	// notifications/cancelled, which the conn handles itself. It runs in the
	// read loop and must not block.
	notify func(method string, params json.RawMessage)
	// request answers a server-to-client request; nil answers -32601.
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// conn is a JSON-RPC 2.0 client over a backend's stdin and stdout, one
// message per line. Results are kept as the exact bytes the backend wrote.
//
// Its read loop (readLoop) ends at stdout EOF and then closes eof; the owner
// decides why the session ended and calls shutdown, which fails every
// pending call with that error. Calls never outlive shutdown.
type conn struct {
	server string
	log    *slog.Logger
	hooks  connHooks

	w    *os.File      // the child's stdin
	wsem chan struct{} // one writer at a time; a channel so waiting can time out

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan response
	progress map[string]*progressSink
	handling map[string]context.CancelFunc // server-to-client requests in flight, by raw id
	err      error                         // set by shutdown

	eof       chan struct{} // closed when readLoop has returned
	eofReason string        // why readLoop stopped before EOF; read after eof
	done      chan struct{} // closed by shutdown

	ctx    context.Context // cancelled by shutdown; parent of request handlers
	cancel context.CancelFunc
	wg     sync.WaitGroup // request handlers and cancellation writers
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

type response struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

func newConn(server string, w *os.File, log *slog.Logger, hooks connHooks) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{
		server:   server,
		log:      log,
		hooks:    hooks,
		w:        w,
		wsem:     make(chan struct{}, 1),
		pending:  make(map[int64]chan response),
		progress: make(map[string]*progressSink),
		handling: make(map[string]context.CancelFunc),
		eof:      make(chan struct{}),
		done:     make(chan struct{}),
		ctx:      ctx,
		cancel:   cancel,
	}
}

// readLoop reads r until EOF or an error and dispatches each message. Lines
// that are not JSON objects (banners, npm notices) are dropped with a
// warning. It closes c.eof when it returns.
func (c *conn) readLoop(r io.Reader) {
	defer close(c.eof)
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, being assembled
	for {
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			if len(long) > maxLine {
				c.eofReason = fmt.Sprintf("wrote a line over %d MiB on stdout", maxLine>>20)
				c.log.Warn("backend wrote a line over the size limit on stdout; ending the session", "server", c.server, "limit", maxLine)
				return
			}
			continue
		}
		line := frag
		if len(long) > 0 {
			long = append(long, frag...)
			line = long
		}
		if len(line) > 0 {
			c.handleLine(line) // keeps no reference to line
		}
		if cap(long) > 1<<20 {
			long = nil // don't pin a huge buffer after one big message
		} else {
			long = long[:0]
		}
		if err != nil {
			if err != io.EOF && !errors.Is(err, os.ErrClosed) {
				c.eofReason = "stdout: " + err.Error()
				c.log.Debug("backend stdout read error", "server", c.server, "err", err)
			}
			return
		}
	}
}

// handleLine decodes one line with the envelope codec the gateway's client
// side uses (package wire). line is reused after handleLine returns: what
// outlives it is copied.
func (c *conn) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] != '{' {
		c.log.Warn("dropped a non-JSON line on backend stdout", "server", c.server, "line", truncate(line, 200))
		return
	}
	msg, err := wire.Decode(line)
	if err != nil {
		c.log.Warn("dropped a line that is not a JSON-RPC message", "server", c.server, "reason", err, "line", truncate(line, 200))
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

func (c *conn) handleResponse(msg wire.Message) {
	// The gateway's ids are integers; a backend that echoes one as a
	// string ("5") is answered all the same rather than left to time out.
	raw := strings.Trim(string(msg.ID), `"`)
	id, err := strconv.ParseInt(raw, 10, 64)
	var (
		ch chan response
		ok bool
	)
	if err == nil {
		c.mu.Lock()
		if ch, ok = c.pending[id]; ok {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	if !ok {
		// A late answer to a call that timed out or was cancelled, or a
		// backend that mangles ids.
		c.log.Debug("ignored a response to an unknown id", "server", c.server, "id", string(msg.ID))
		return
	}
	r := response{result: bytes.Clone(msg.Result)}
	if msg.Error != nil {
		r.err = new(jsonrpc.Error)
		if err := json.Unmarshal(msg.Error, r.err); err != nil {
			r.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "invalid error object from the backend"}
		}
	}
	ch <- r // buffered, and only one sender ever gets ch out of pending
}

func (c *conn) handleNotification(method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(params, &p); err != nil {
			c.log.Debug("bad progress notification", "server", c.server, "err", err)
			return
		}
		tok, _ := p.ProgressToken.(string)
		c.mu.Lock()
		sink := c.progress[tok]
		c.mu.Unlock()
		if sink == nil {
			c.log.Debug("progress for an unknown token", "server", c.server, "token", p.ProgressToken)
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
		if c.hooks.notify != nil {
			c.hooks.notify(method, params)
		}
	}
}

// handleRequest answers a server-to-client request in its own goroutine,
// which ends when the handler returns; shutdown cancels its context.
func (c *conn) handleRequest(id json.RawMessage, method string, params json.RawMessage) {
	key := string(id)
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		cancel()
		return
	}
	c.handling[key] = cancel
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.handling, key)
			c.mu.Unlock()
			cancel()
		}()
		var (
			result json.RawMessage
			err    error
		)
		switch {
		case method == "ping":
			result = json.RawMessage("{}")
		case c.hooks.request == nil:
			err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
		default:
			result, err = c.hooks.request(ctx, method, params)
		}
		if ctx.Err() != nil && c.ctx.Err() == nil {
			return // the backend cancelled it: no response is sent
		}
		var buf bytes.Buffer
		buf.WriteString(`{"jsonrpc":"2.0","id":`)
		buf.Write(id)
		if err == nil {
			if result == nil {
				result = json.RawMessage("{}")
			}
			if err = writeCompact(&buf, `,"result":`, result); err == nil {
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
		if werr := c.write(ctx, time.Now().Add(10*time.Second), buf.Bytes()); werr != nil {
			c.log.Debug("could not answer a backend request", "server", c.server, "method", method, "err", werr)
		}
	}()
}

// wireErrorOf turns a request handler's error into a JSON-RPC error,
// keeping the code of a *jsonrpc.Error or *RPCError.
func wireErrorOf(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	var re *RPCError
	if errors.As(err, &re) {
		return &jsonrpc.Error{Code: re.Code, Message: re.Message, Data: re.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// writeCompact writes prefix and then v, compacted when it holds a newline
// (a line-delimited stream cannot carry one). It fails if v is not JSON.
func writeCompact(buf *bytes.Buffer, prefix string, v json.RawMessage) error {
	if bytes.ContainsAny(v, "\r\n") {
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return err
		}
		v = c.Bytes()
	} else if !json.Valid(v) {
		return errors.New("invalid JSON")
	}
	buf.WriteString(prefix)
	buf.Write(v)
	return nil
}

// write writes one whole message. Waiting for the stream and the write
// itself stop at deadline (zero: none) or when stop is done; a message cut
// short by the deadline would corrupt the stream, so it breaks the conn.
func (c *conn) write(ctx context.Context, deadline time.Time, msg []byte) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	case <-timeout:
		return errCallTimeout
	}
	defer func() { <-c.wsem }()
	select {
	case <-c.done:
		return c.closedErr()
	default:
	}
	_ = c.w.SetWriteDeadline(deadline)
	n, err := c.w.Write(msg)
	if err != nil {
		if n > 0 {
			// Half a message is on the wire: nothing after it can be parsed.
			c.log.Warn("write to backend stdin cut short; closing its stdin", "server", c.server, "err", err)
			_ = c.w.Close()
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errCallTimeout
		}
		select {
		case <-c.done:
			return c.closedErr()
		default:
		}
		return fmt.Errorf("write to %s: %w", c.server, err)
	}
	return nil
}

func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return errors.New("connection closed")
}

// notify sends a notification; params must be compact JSON or nil.
func (c *conn) notify(ctx context.Context, deadline time.Time, method string, params json.RawMessage) error {
	return c.write(ctx, deadline, encodeMessage(0, method, params))
}

// encodeMessage encodes a request (id > 0) or a notification (id 0) as one
// line; params must be compact JSON or nil. The gateway's ids start at 1.
func encodeMessage(id int64, method string, params json.RawMessage) []byte {
	var idJSON json.RawMessage
	if id > 0 {
		idJSON = strconv.AppendInt(make([]byte, 0, 20), id, 10)
	}
	buf := wire.AppendRequest(make([]byte, 0, 64+len(method)+len(params)), idJSON, method, params)
	return append(buf, '\n')
}

// callOpts are the per-call settings of conn.call.
type callOpts struct {
	timeout  time.Duration // 0: none
	progress func(*mcp.ProgressNotificationParams)
	token    string // progress token already placed in params, if progress is set
}

// call sends a request and waits for its response, the timeout, ctx, or
// shutdown. params must be compact JSON (or nil). On timeout or ctx
// cancellation the backend is sent notifications/cancelled and call returns
// errCallTimeout or ctx.Err() at once. A JSON-RPC error is returned as
// *jsonrpc.Error; after shutdown, the shutdown error.
func (c *conn) call(ctx context.Context, method string, params json.RawMessage, o callOpts) (json.RawMessage, error) {
	var (
		deadline time.Time
		timeout  <-chan time.Time
	)
	if o.timeout > 0 {
		deadline = time.Now().Add(o.timeout)
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		timeout = t.C
	}
	writeDeadline := deadline // ctx's deadline bounds the write too
	if d, ok := ctx.Deadline(); ok && (writeDeadline.IsZero() || d.Before(writeDeadline)) {
		writeDeadline = d
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	var sink *progressSink
	if o.progress != nil {
		sink = &progressSink{fn: o.progress}
		c.progress[o.token] = sink
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		if sink != nil {
			delete(c.progress, o.token)
		}
		c.mu.Unlock()
		if sink != nil {
			sink.close()
		}
	}()

	if err := c.write(ctx, writeDeadline, encodeMessage(id, method, params)); err != nil {
		if errors.Is(err, errCallTimeout) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Nothing (or, if the write was cut short, nothing usable) reached
		// the backend: there is nothing to cancel.
		if err == errCallTimeout || ctx.Err() != nil {
			return nil, err
		}
		// A broken pipe usually means the child just died: report that.
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-c.done:
			return nil, c.closedErr()
		case <-timeout:
			return nil, errCallTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, err
		}
	}

	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-c.done:
		// A response read just before shutdown still counts.
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, r.err
			}
			return r.result, nil
		default:
		}
		return nil, c.closedErr()
	case <-timeout:
		c.cancelAsync(id, "timeout")
		return nil, errCallTimeout
	case <-ctx.Done():
		c.cancelAsync(id, "cancelled by the client")
		return nil, ctx.Err()
	}
}

// cancelAsync sends notifications/cancelled for request id without making
// the caller wait for the write.
func (c *conn) cancelAsync(id int64, reason string) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	params, _ := json.Marshal(struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason"`
	}{id, reason})
	go func() {
		defer c.wg.Done()
		if err := c.notify(c.ctx, time.Now().Add(10*time.Second), "notifications/cancelled", params); err != nil {
			c.log.Debug("could not send notifications/cancelled", "server", c.server, "id", id, "err", err)
		}
	}()
}

// shutdown ends the session: every pending and later call fails with err,
// request handlers are cancelled. It does not close the pipes (the process
// owner does) and may be called more than once; the first error wins.
func (c *conn) shutdown(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.mu.Unlock()
	close(c.done)
	c.cancel()
}

// wait waits for the conn's goroutines (request handlers, cancellation
// writers) after shutdown and after the child's stdin was closed.
func (c *conn) wait() { c.wg.Wait() }

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes is the largest message the stdio transport accepts.
const DefaultMaxMessageBytes = 16 << 20

// StdioOptions configure a StdioTransport.
type StdioOptions struct {
	// LineMode forces line-delimited replies (MCP_LINE_MODE=1); otherwise
	// replies follow the framing of the first message received.
	LineMode bool
	// MaxMessageBytes caps one message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	Logger          *slog.Logger
}

// StdioTransport serves MCP on a byte stream (the gateway's stdin and
// stdout). It accepts both Content-Length framed messages and line-delimited
// JSON, in any mix and any split across reads; a UTF-8 BOM before a message is
// skipped. Bad input never ends the stream: invalid JSON is answered with a
// -32700 error (id null), a JSON value that is not a JSON-RPC message with
// -32600, a bad or oversized Content-Length with -32700 and its bytes
// skipped, and the next message is served. Replies are written whole, never
// interleaved. After a notifications/cancelled for a request, no response for
// that request id is written.
//
// Each piece of bad input gets exactly one error reply, which never echoes
// it: invalid JSON or UTF-8, a line or body over MaxMessageBytes (discarded
// without being held in memory), a header block without a usable
// Content-Length. After such a header block the body's length is unknown, so
// the transport skips input up to the next Content-Length header or the next
// line that starts with '{' or '['; the line right after the block is taken
// for the bad message's body and skipped too.
//
// Replies are framed like the first input received (Content-Length framed or
// one line each) unless LineMode is set; anything written before any input
// arrives is line-delimited. Error replies to bad input are written by the
// transport itself, in input order, each once the messages before it have
// been taken by the session (in its next Read); the session's own responses
// may come later, since it handles requests concurrently.
//
// The transport does not close r or w. Its connection reads r in a goroutine
// of its own, which exits when r reports an error or end of input. After the
// connection is closed that goroutine delivers nothing more: it exits as
// soon as it has read the next message or piece of bad input, or r returns
// an error or end of input. If r may block forever (a terminal, a pipe whose
// writer lives on), its owner closes it after closing the connection to let
// the goroutine go; at process exit nothing needs doing.
type StdioTransport struct {
	r         io.Reader
	w         io.Writer
	opts      StdioOptions
	connected atomic.Bool
}

// NewStdioTransport returns a transport reading r and writing w.
func NewStdioTransport(r io.Reader, w io.Writer, opts StdioOptions) *StdioTransport {
	return &StdioTransport{r: r, w: w, opts: opts}
}

// Connect implements mcp.Transport. It may be called once; it starts reading
// r.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errors.New("gateway: StdioTransport.Connect called more than once")
	}
	return newStdioConn(t.r, t.w, t.opts), nil
}

// stdioMaxTracked bounds the number of in-flight incoming calls whose ids
// are remembered for cancellation. Calls beyond it are served normally, but
// their responses are not suppressed if they are cancelled.
const stdioMaxTracked = 1 << 16

const stdioMethodCancelled = "notifications/cancelled"

// stdioConn is the mcp.Connection of a StdioTransport.
type stdioConn struct {
	w        io.Writer
	log      *slog.Logger
	lineMode bool
	framing  atomic.Uint32 // stdioFraming of the first input; replies follow it

	incoming   chan stdioItem // reader goroutine → Read, unbuffered
	readerDone chan struct{}  // closed when the reader goroutine exits
	readErr    error          // why it exited; set before readerDone is closed
	closed     chan struct{}
	closeOnce  sync.Once

	writeMu sync.Mutex // held while a whole message is written to w

	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // incoming call id → cancelled; removed when its response is written
	// responding counts responses being written; drained is closed when
	// inflight is empty and nothing is being written, while Read drains at
	// the end of input.
	responding int
	drained    chan struct{}
}

// stdioDrainGrace bounds how long Read holds back the end of input for
// calls still in flight.
const stdioDrainGrace = 30 * time.Second

func newStdioConn(r io.Reader, w io.Writer, opts StdioOptions) *stdioConn {
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &stdioConn{
		w:          w,
		log:        log,
		lineMode:   opts.LineMode,
		incoming:   make(chan stdioItem),
		readerDone: make(chan struct{}),
		closed:     make(chan struct{}),
		inflight:   make(map[jsonrpc.ID]bool),
	}
	go c.readLoop(newStdioFramer(r, max, 0))
	return c
}

// stdioItem is what the reader goroutine hands to Read: a message, or the
// error reply to a piece of bad input.
type stdioItem struct {
	msg     jsonrpc.Message
	rej     *stdioReject
	framing stdioFraming
	size    int
}

// readLoop is the reader goroutine: it owns f (and so the reads of r) and
// exits at the end of input or, once c is closed, when the current read
// returns.
func (c *stdioConn) readLoop(f *stdioFramer) {
	defer close(c.readerDone)
	for {
		fr, err := f.next()
		if err != nil {
			if err == io.EOF {
				c.log.Debug("stdio: end of input")
			} else {
				c.log.Warn("stdio: read failed", "err", err)
			}
			c.readErr = err
			return
		}
		c.framing.CompareAndSwap(uint32(stdioFramingNone), uint32(fr.framing))
		it := stdioItem{framing: fr.framing, size: fr.size}
		it.msg, it.rej = stdioDecode(fr)
		if it.msg != nil {
			c.track(it.msg)
		}
		select {
		case c.incoming <- it:
		case <-c.closed:
			return
		}
	}
}

// Read implements mcp.Connection. It returns the next message, after writing
// the error replies to any bad input before it, so that those replies follow
// the handling of earlier messages. It returns io.EOF at the end of input and
// after Close, and the reader's error if reading failed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		default:
		}
		select {
		case it := <-c.incoming:
			if it.rej != nil {
				c.log.Warn("stdio: bad input", "framing", it.framing, "bytes", it.size,
					"code", it.rej.code, "reason", it.rej.reason)
				if err := c.writeReject(it.rej); err != nil && !c.isClosed() {
					c.log.Warn("stdio: writing an error reply failed", "err", err)
				}
				continue
			}
			c.logMessage("recv", it.framing, it.msg, it.size)
			return it.msg, nil
		case <-c.readerDone:
			if c.readErr == io.EOF {
				c.drain(ctx)
			}
			return nil, c.readErr
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// drain waits, up to stdioDrainGrace, until every call read so far has been
// answered. A client that writes its requests and closes its end (a script,
// a pipe) still gets its answers: go-sdk cancels every call in flight once
// Read reports the end of input. A client that wants the gateway gone sooner
// sends SIGTERM, which closes the connection and ends the wait.
func (c *stdioConn) drain(ctx context.Context) {
	c.mu.Lock()
	if len(c.inflight) == 0 && c.responding == 0 {
		c.mu.Unlock()
		return
	}
	c.drained = make(chan struct{})
	done := c.drained
	n := len(c.inflight)
	c.mu.Unlock()
	c.log.Debug("stdio: end of input; waiting for calls in flight", "calls", n)
	t := time.NewTimer(stdioDrainGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Warn("stdio: end of input; calls still in flight are abandoned", "after", stdioDrainGrace)
	case <-c.closed:
	case <-ctx.Done():
	}
}

// Write implements mcp.Connection. It is safe for concurrent use; each
// message is written whole with a single w.Write. A response to a call that
// the peer has cancelled is dropped, and Write reports success. After Close,
// Write fails.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		cancelled := c.settle(resp.ID)
		// A drain at the end of input waits for this write too.
		defer c.responded()
		if cancelled {
			c.log.Debug("stdio: response dropped, request was cancelled", "id", resp.ID.Raw())
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.isClosed() {
		return fmt.Errorf("gateway: stdio write: %w", mcp.ErrConnectionClosed)
	}
	var (
		data []byte
		err  error
	)
	if isResp && !resp.ID.IsValid() {
		// jsonrpc.EncodeMessage would omit the id; JSON-RPC wants "id": null.
		data, err = stdioEncodeError(nil, stdioWireError(resp.Error))
	} else {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("gateway: stdio write: %w", err)
	}
	framing, n, err := c.writeMessage(data)
	if err != nil {
		return err
	}
	c.logMessage("send", framing, msg, n)
	return nil
}

// Close implements mcp.Connection. It unblocks a pending Read, makes later
// Writes fail, and tells the reader goroutine to stop; it does not close r
// or w. Close is idempotent and always returns nil.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// writeMessage frames data as replies are framed and writes it whole.
func (c *stdioConn) writeMessage(data []byte) (stdioFraming, int, error) {
	framing := stdioFramingLine
	if !c.lineMode && stdioFraming(c.framing.Load()) == stdioFramingHeader {
		framing = stdioFramingHeader
	}
	var buf []byte
	if framing == stdioFramingHeader {
		buf = make([]byte, 0, len(data)+32)
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, int64(len(data)), 10)
		buf = append(buf, "\r\n\r\n"...)
		buf = append(buf, data...)
	} else {
		buf = append(data, '\n')
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.isClosed() {
		return framing, 0, fmt.Errorf("gateway: stdio write: %w", mcp.ErrConnectionClosed)
	}
	n, err := c.w.Write(buf)
	if err != nil {
		return framing, n, fmt.Errorf("gateway: stdio write: %w", err)
	}
	return framing, n, nil
}

// track records incoming calls, and marks them cancelled when the peer
// sends notifications/cancelled, so that Write can drop their responses.
func (c *stdioConn) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case req.IsCall():
		if _, dup := c.inflight[req.ID]; !dup && len(c.inflight) < stdioMaxTracked {
			c.inflight[req.ID] = false
		}
	case req.Method == stdioMethodCancelled:
		var params struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &params) != nil {
			return
		}
		id, err := jsonrpc.MakeID(params.RequestID)
		if err != nil || !id.IsValid() {
			return
		}
		if _, live := c.inflight[id]; live {
			c.inflight[id] = true
		}
	}
}

// settle forgets the incoming call id, whose response is about to be
// written, and reports whether that call was cancelled. The response counts
// as being written until responded.
func (c *stdioConn) settle(id jsonrpc.ID) (cancelled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responding++
	if !id.IsValid() {
		return false
	}
	cancelled = c.inflight[id]
	delete(c.inflight, id)
	return cancelled
}

// responded marks a response written (or dropped), and ends a drain that
// was waiting for it.
func (c *stdioConn) responded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responding--
	if c.responding == 0 && len(c.inflight) == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

func (c *stdioConn) logMessage(dir string, framing stdioFraming, msg jsonrpc.Message, n int) {
	if !c.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []any{"dir", dir, "framing", framing, "bytes", n}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		attrs = append(attrs, "method", m.Method)
		if m.IsCall() {
			attrs = append(attrs, "id", m.ID.Raw())
		}
	case *jsonrpc.Response:
		attrs = append(attrs, "id", m.ID.Raw())
		if m.Error != nil {
			attrs = append(attrs, "error", stdioWireError(m.Error).Code)
		}
	}
	c.log.Debug("stdio: message", attrs...)
}

// stdioReject is the error reply to one piece of bad input.
type stdioReject struct {
	code    int64
	message string
	reason  string
	id      json.RawMessage // the request's id when one could be read, else nil (null)
}

func stdioParseError(reason string) *stdioReject {
	return &stdioReject{code: jsonrpc.CodeParseError, message: "Parse error", reason: reason}
}

func stdioInvalidRequest(reason string, id json.RawMessage) *stdioReject {
	return &stdioReject{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request", reason: reason, id: id}
}

// stdioDecode turns a frame into a JSON-RPC message, or into the error reply
// it deserves.
func stdioDecode(fr stdioFrame) (jsonrpc.Message, *stdioReject) {
	if fr.bad != "" {
		return nil, stdioParseError(fr.bad)
	}
	body := fr.body
	if !utf8.Valid(body) {
		return nil, stdioParseError("invalid UTF-8")
	}
	if !json.Valid(body) {
		return nil, stdioParseError("invalid JSON")
	}
	switch stdioTrimSpace(body)[0] {
	case '{':
	case '[':
		return nil, stdioInvalidRequest("batches are not supported", nil)
	default:
		return nil, stdioInvalidRequest("not a JSON object", nil)
	}
	msg, err := decodeMessage(body)
	if err != nil {
		return nil, stdioInvalidRequest("not a JSON-RPC 2.0 message", stdioRequestID(body))
	}
	return msg, nil
}

// wireMessage is the union of a JSON-RPC request and response on the wire.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage does,
// with encoding/json: go-sdk's decoder allocates a 32 KiB buffer per call
// and decodes twice, which dominated the gateway's per-message cost
// (docs/benchmarks.md).
func decodeMessage(body []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q", w.Version)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a response needs an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// stdioRequestID returns the "id" member of the JSON object body if it is a
// string or a number, else nil.
func stdioRequestID(body []byte) json.RawMessage {
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return nil
	}
	id := stdioTrimSpace(probe["id"])
	if len(id) == 0 {
		return nil
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return json.RawMessage(id)
	}
	return nil
}

func (c *stdioConn) writeReject(rej *stdioReject) error {
	data, err := json.Marshal(map[string]string{"reason": rej.reason})
	if err != nil {
		return err
	}
	msg, err := stdioEncodeError(rej.id, &jsonrpc.Error{Code: rej.code, Message: rej.message, Data: data})
	if err != nil {
		return err
	}
	_, _, err = c.writeMessage(msg)
	return err
}

// stdioEncodeError encodes an error response with the given raw id; a nil
// id is written as null.
func stdioEncodeError(id json.RawMessage, e *jsonrpc.Error) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
}

// stdioWireError converts a response error as the go-sdk does on the wire.
func stdioWireError(err error) *jsonrpc.Error {
	if err == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
	if we, ok := err.(*jsonrpc.Error); ok {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}

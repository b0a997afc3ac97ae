// Package remote is the transport of a url: backend: the byte stream
// backends' connection reads and writes, carried over MCP's Streamable HTTP
// transport (both protocol eras) or the legacy HTTP+SSE one.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// A Transport is the transport of a url: backend: the byte stream a conn reads
// and writes, carried over MCP's Streamable HTTP transport, or the legacy
// HTTP+SSE one. It plugs in beneath conn where a child's pipes would be, so
// a remote backend is forwarded by the same code as a local one: conn writes
// whole lines (Write), and reads the server's messages as lines (Reader).
//
// Why not go-sdk's client transports: used outside mcp.Client they never
// learn the negotiated protocol version (no MCP-Protocol-Version header
// after initialize) and never open the standalone GET stream that carries
// list_changed and server requests between calls — the hook that does both
// is unexported. See docs/design.md.
type Transport struct {
	opts Options
	hc   *http.Client

	in  *io.PipeReader // what conn reads
	out *io.PipeWriter // where the server's messages are written, one line each

	ctx    context.Context // cancelled when the transport ends
	cancel context.CancelFunc

	mu        sync.Mutex
	sessionID string                        // Mcp-Session-Id, once the server gave one
	version   string                        // the negotiated protocol version, once known
	endpoint  string                        // where messages are POSTed: the URL, or the SSE endpoint
	sse       bool                          // legacy HTTP+SSE
	initID    string                        // the raw id of the initialize request
	era       wire.Era                      // PerRequestEra once requests of 2026-07-28 were sent: no session
	listening bool                          // the standalone GET stream was started
	calls     map[string]context.CancelFunc // requests being posted, by raw id
	queue     [][]byte
	closed    bool
	reason    string // why the transport ended, set once

	wake chan struct{}
	wg   sync.WaitGroup
}

// Options configure a remote.
type Options struct {
	Server  string
	URL     string
	SSE     bool              // start with the legacy HTTP+SSE transport
	Headers map[string]string // sent with every request; never logged
	Log     *slog.Logger      // names the server (server=NAME)
	// Auth, if set, authorizes requests (Authorization header) and handles
	// a 401 or 403 (auth.go).
	Auth authorizer
	// ToolHeaders, if set, gives the arguments a tool's input schema marks
	// for Mcp-Param headers (wire.HeaderBindings), for a tools/call of
	// 2026-07-28.
	ToolHeaders func(tool string) []wire.HeaderBinding
}

// authorizer is what a remote needs of OAuth: a header for each request,
// and a chance to sign in again when the server refuses it.
type authorizer interface {
	// Header returns the Authorization header value, or "".
	Header(ctx context.Context) (string, error)
	// Refused handles a 401 or 403 to req; nil means retry the request.
	Refused(ctx context.Context, req *http.Request, resp *http.Response) error
}

// Remote transport limits.
const (
	// resumeAttempts bounds the reconnections of a stream that make no
	// progress, like go-sdk's client.
	resumeAttempts = 5
	// resumeDelay is the wait before a reconnection when the server named
	// none (the SSE retry field).
	resumeDelay = time.Second
	// notifyTimeout bounds the POST of a notification or a response.
	notifyTimeout = 10 * time.Second
	// deleteTimeout bounds the DELETE that ends a session.
	deleteTimeout = 2 * time.Second
	// codeTransport is the JSON-RPC code of a call the HTTP layer failed
	// without a JSON-RPC answer (a 500 without a body, a stream cut short).
	codeTransport = -32000
)

// Dial returns a remote ready to carry the session. Over legacy SSE
// it opens the event stream first (the server names the POST endpoint
// there); over Streamable HTTP nothing is sent until conn writes.
func Dial(ctx context.Context, opts Options) (*Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	r := &Transport{
		opts:     opts,
		hc:       &http.Client{Transport: tr, CheckRedirect: sameOriginRedirect(opts.URL)},
		endpoint: opts.URL,
		wake:     make(chan struct{}, 1),
		calls:    make(map[string]context.CancelFunc),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.in, r.out = io.Pipe()
	if opts.SSE {
		if err := r.connectSSE(ctx, true); err != nil {
			r.cancel()
			tr.CloseIdleConnections()
			return nil, err
		}
	}
	r.wg.Add(1)
	go r.sendLoop()
	return r, nil
}

// Reader is the stream of the server's messages, one per line; it ends
// when the transport does.
func (r *Transport) Reader() io.Reader { return r.in }

// Write queues whole lines, each one message, for sendLoop; it never
// blocks on the network.
func (r *Transport) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.reason != "" {
		return 0, io.ErrClosedPipe
	}
	for line := range bytes.Lines(p) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			r.queue = append(r.queue, bytes.Clone(line))
		}
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Close is conn's way to end a stream it could not write whole; for a
// remote, the session ends.
func (r *Transport) Close() error {
	r.fail("a message could not be sent")
	return nil
}

// Failure returns why the transport ended, or "".
func (r *Transport) Failure() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// fail ends the transport for reason (the first reason wins): conn reads
// EOF, every request in flight is abandoned. The reason is shown (status,
// the client's errors, the log), so the secrets of the URL an HTTP error
// names are masked.
func (r *Transport) fail(reason string) {
	r.mu.Lock()
	if r.reason == "" && !r.closed {
		r.reason = config.RedactURL(reason)
	}
	r.mu.Unlock()
	r.cancel()
	_ = r.out.Close()
}

// connectionBroke reports whether a request failed because its connection
// was cut after it was made (the server or a proxy closed or reset it), as
// opposed to no connection at all.
func connectionBroke(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, e := range brokenErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Shutdown ends the session deliberately: the server is told (DELETE),
// every request and stream is abandoned, and shutdown returns when every
// goroutine of the transport has.
func (r *Transport) Shutdown() {
	r.mu.Lock()
	r.closed = true
	sid, sse := r.sessionID, r.sse
	failed := r.reason != ""
	r.mu.Unlock()
	r.cancel()
	_ = r.out.Close()
	_ = r.in.Close()
	r.wg.Wait()
	if sid != "" && !sse && !failed {
		ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, r.opts.URL, nil); err == nil {
			r.setHeaders(ctx, req)
			if resp, err := r.hc.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	r.hc.CloseIdleConnections()
}

// sendLoop sends the queued messages in order. A request is posted on a
// goroutine of its own (a server may hold the POST until the result is
// ready); a notification or a response is posted before the next message,
// so that initialized reaches the server before the first list request.
func (r *Transport) sendLoop() {
	defer r.wg.Done()
	for {
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return
		}
		for {
			r.mu.Lock()
			if len(r.queue) == 0 {
				r.mu.Unlock()
				break
			}
			msg := r.queue[0]
			r.queue[0] = nil
			r.queue = r.queue[1:]
			r.mu.Unlock()
			m, err := wire.Decode(msg)
			if err != nil {
				r.opts.Log.Debug("not sending an invalid message", "err", err)
				continue
			}
			if !m.IsCall() {
				if m.Method == "notifications/initialized" && !r.isSSE() {
					r.listen()
				}
				// In 2026-07-28 a request is cancelled by ending its HTTP
				// request: there is no session to post the notification to.
				if m.Method != "notifications/cancelled" || r.protocolEra() != wire.PerRequestEra {
					r.post(r.ctx, msg, nil, m.Method, nil)
				}
				if m.Method == "notifications/cancelled" {
					r.abandon(m.Params)
				}
				continue
			}
			var hdr http.Header
			if h := (http.Header{}); wire.SetStandardHeaders(h, &m, r.opts.ToolHeaders) {
				hdr = h
				r.mu.Lock()
				r.era = wire.PerRequestEra
				r.mu.Unlock()
			}
			if m.Method == "initialize" {
				r.mu.Lock()
				r.initID = string(m.ID)
				r.mu.Unlock()
			}
			id := bytes.Clone(m.ID)
			ctx, cancel := context.WithCancel(r.ctx)
			r.mu.Lock()
			r.calls[string(id)] = cancel
			r.mu.Unlock()
			r.wg.Add(1)
			go func(method string) {
				defer r.wg.Done()
				defer func() {
					r.mu.Lock()
					delete(r.calls, string(id))
					r.mu.Unlock()
					cancel()
				}()
				r.post(ctx, msg, id, method, hdr)
			}(m.Method)
		}
	}
}

// abandon stops waiting for the answer to the request a
// notifications/cancelled names (its params): the call has ended, and a
// server that still holds the POST must not hold a goroutine and a
// connection for it.
func (r *Transport) abandon(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	r.mu.Lock()
	cancel := r.calls[string(p.RequestID)]
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// post sends one message within ctx; id is the request's id (nil for a
// notification or a response), hdr its standard headers of 2026-07-28 (nil
// for a message of the handshake era). What the server answers goes to
// conn; a failure that concerns the session ends it (fail), one that
// concerns the call answers it with an error.
func (r *Transport) post(ctx context.Context, msg, id []byte, method string, hdr http.Header) {
	if id == nil {
		// A notification or a response is answered with 202 at once; one
		// the server sits on must not hold up the messages behind it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, notifyTimeout)
		defer cancel()
	}
	resp, err := r.do(ctx, http.MethodPost, msg, hdr, true)
	if err != nil {
		var re *oauth.RefreshError
		switch {
		case r.ctx.Err() != nil:
		case errors.As(err, &re):
			// Not the session's failure: this message is not sent.
			if id != nil {
				r.deliverError(id, err.Error())
			} else {
				r.opts.Log.Warn("remote server message not sent", "method", method, "err", err)
			}
		case ctx.Err() != nil:
			if id != nil {
				return // abandoned: the call has ended
			}
			r.opts.Log.Warn("remote server did not accept a message in time", "method", method, "timeout", notifyTimeout)
		case id != nil && connectionBroke(err):
			// This request's connection broke (a proxy or the server cut
			// it mid-exchange), not the server: the call fails, and the
			// calls on other connections go on. A server that is gone
			// refuses the next connection, which ends the session.
			r.deliverError(id, "the connection to the server broke: "+config.RedactURL(err.Error()))
		default:
			r.fail(err.Error())
		}
		return
	}
	r.mu.Lock()
	sse := r.sse
	r.mu.Unlock()
	code := resp.StatusCode
	switch {
	case code == http.StatusUnauthorized:
		// Not signed in (or the headers' token is wrong): nothing of this
		// session will pass. A 403 refuses only what was asked (below).
		resp.Body.Close()
		r.fail(resp.Status)
		return
	case method == "initialize" && code >= 400 && code < 500 && !sse:
		// A 2024-11-05 server: Streamable HTTP is refused, try HTTP+SSE.
		resp.Body.Close()
		r.opts.Log.Info("remote server refused Streamable HTTP; trying HTTP+SSE", "status", code)
		if err := r.connectSSE(r.ctx, true); err != nil {
			if r.ctx.Err() == nil {
				r.fail(fmt.Sprintf("Streamable HTTP: %s; HTTP+SSE: %v", resp.Status, err))
			}
			return
		}
		r.post(ctx, msg, id, method, hdr)
		return
	case code == http.StatusNotFound && (sse || r.session() != ""):
		resp.Body.Close()
		r.fail("the server ended the session (404 Not Found)")
		return
	case code < 200 || code > 299:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if id == nil {
			r.opts.Log.Debug("remote server refused a message", "method", method, "status", resp.Status)
			return
		}
		if m, err := wire.Decode(body); err == nil && m.IsResponse() && bytes.Equal(m.ID, id) {
			r.deliver(body)
			return
		}
		r.deliverError(id, "HTTP "+resp.Status)
		return
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && !sse {
		r.mu.Lock()
		if r.sessionID == "" {
			r.sessionID = sid
		}
		r.mu.Unlock()
	}
	if sse || id == nil || code == http.StatusAccepted {
		// The answer comes on the event stream (HTTP+SSE, or a server that
		// accepted the request to answer it on the standalone stream).
		resp.Body.Close()
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxMessage+1))
		resp.Body.Close()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.deliverError(id, "reading the response: "+err.Error())
			}
		case len(body) > wire.MaxMessage:
			r.deliverError(id, fmt.Sprintf("response over %d MiB", wire.MaxMessage>>20))
		default:
			r.deliver(body)
		}
	case "text/event-stream":
		r.stream(ctx, resp, id)
	default:
		resp.Body.Close()
		r.deliverError(id, fmt.Sprintf("unexpected response content type %q", ct))
	}
}

// do POSTs body to the message endpoint with the backend's headers, the
// message's own (hdr) and authorization; a 401 or 403 is handed to the
// authorizer once, and the request retried if it signed in again.
func (r *Transport) do(ctx context.Context, method string, body []byte, hdr http.Header, retryAuth bool) (*http.Response, error) {
	r.mu.Lock()
	target := r.endpoint
	r.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if err := r.setHeaders(r.ctx, req); err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	traceHeaders(req.Header, body)
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, causeOf(err)
	}
	if a := r.opts.Auth; a != nil && retryAuth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		aerr := a.Refused(r.ctx, req, resp)
		resp.Body.Close()
		if aerr != nil {
			return nil, aerr
		}
		return r.do(ctx, method, body, hdr, false)
	}
	return resp, nil
}

// traceHeaders puts the W3C trace context a request carries in its _meta
// (the gateway's span of the call, when tracing) in the POST's headers
// too, where HTTP servers and proxies in front of them look for it.
func traceHeaders(h http.Header, body []byte) {
	if !bytes.Contains(body, []byte(`"traceparent"`)) {
		return
	}
	meta := wire.Member(wire.Member(body, "params"), "_meta")
	for _, k := range []string{"traceparent", "tracestate"} {
		if v, ok := wire.Unquote(wire.Member(meta, k)); ok && v != "" {
			h.Set(k, v)
		}
	}
}

// causeOf strips the method and URL from an HTTP client error: the URL is
// in the configuration (and may hold a secret), the cause is what matters.
func causeOf(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// sameOriginRedirect follows redirects only within base's origin (an
// http URL may move to https on the same host): Go's client carries every
// header but Authorization and cookies to another host, and the configured
// headers often hold a key.
func sameOriginRedirect(base string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		upgrade := *req.URL
		if upgrade.Scheme == "https" {
			upgrade.Scheme = "http"
		}
		if !sameOrigin(req.URL, base) && !sameOrigin(&upgrade, base) {
			return fmt.Errorf("redirected to another origin (%s); refused", req.URL.Host)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// sameOrigin reports whether u has the scheme and host of the URL base.
func sameOrigin(u *url.URL, base string) bool {
	b, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Host, b.Host)
}

// setHeaders puts the configured headers, the session's and the
// authorization on req.
func (r *Transport) setHeaders(ctx context.Context, req *http.Request) error {
	for k, v := range r.opts.Headers {
		req.Header.Set(k, v)
	}
	r.mu.Lock()
	sid, version := r.sessionID, r.version
	r.mu.Unlock()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if r.opts.Auth != nil {
		h, err := r.opts.Auth.Header(ctx)
		if err != nil {
			return err
		}
		if h != "" {
			req.Header.Set("Authorization", h)
		}
	}
	return nil
}

func (r *Transport) isSSE() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sse
}

// protocolEra returns the era of the requests sent so far: the
// per-request era once one of its requests was.
func (r *Transport) protocolEra() wire.Era {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.era
}

func (r *Transport) session() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionID
}

// stream reads a POST's event stream until the response to id, resuming
// it with Last-Event-ID when the server cuts it short and named event ids.
func (r *Transport) stream(ctx context.Context, resp *http.Response, id []byte) {
	var lastID string
	fails := 0
	for {
		done, last, retry := r.readEvents(resp.Body, id)
		if done {
			// The server ends the stream after the answer; reading to its
			// end lets the connection serve the next request. One that
			// keeps it open is cut off.
			t := time.AfterFunc(time.Second, func() { resp.Body.Close() })
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			t.Stop()
		}
		resp.Body.Close()
		if done || ctx.Err() != nil {
			return
		}
		if last != "" && last != lastID {
			lastID, fails = last, 0
		} else {
			fails++
		}
		if lastID == "" || fails > resumeAttempts {
			r.deliverError(id, "the server ended the response stream without a response")
			return
		}
		next, err := r.resume(ctx, lastID, retry)
		if err != nil {
			// The server is gone or forgot the session: a fresh one is
			// needed (the supervisor reconnects).
			if ctx.Err() == nil {
				r.fail(err.Error())
			}
			return
		}
		resp = next
	}
}

// listen opens the standalone GET stream, for the server's messages outside
// any request, and keeps it open, reconnecting when it ends. It waits (up
// to listenWait) until the server answered the GET, so that the stream is
// there before initialized is sent, as go-sdk's client has it: a server may
// send on the first GET it sees. A server without one (405, or another
// refusal) is fine.
func (r *Transport) listen() {
	r.mu.Lock()
	if r.listening || r.closed {
		r.mu.Unlock()
		return
	}
	r.listening = true
	r.mu.Unlock()
	opened := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.listenLoop(opened)
	}()
	t := time.NewTimer(listenWait)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	case <-r.ctx.Done():
	}
}

// listenWait bounds how long initialized waits for the standalone stream.
const listenWait = 2 * time.Second

// listenLoop is listen's goroutine; it closes opened once the first GET
// was answered (or failed).
func (r *Transport) listenLoop(opened chan struct{}) {
	var once sync.Once
	open := func() { once.Do(func() { close(opened) }) }
	defer open()
	var lastID string
	var retry time.Duration
	for fails := 0; fails <= resumeAttempts; {
		resp, err := r.resume(r.ctx, lastID, retry)
		open()
		if err != nil {
			// The server went away (a restart loses the session too):
			// the supervisor reconnects with a fresh session.
			if r.ctx.Err() == nil {
				r.fail(err.Error())
			}
			return
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode == http.StatusNotFound && r.session() != "":
			resp.Body.Close()
			r.fail("the server ended the session (404 Not Found)")
			return
		case resp.StatusCode < 200 || resp.StatusCode > 299 || ct != "text/event-stream":
			resp.Body.Close()
			r.opts.Log.Debug("remote server has no standalone stream", "status", resp.Status)
			return
		}
		_, last, rt := r.readEvents(resp.Body, nil)
		resp.Body.Close()
		if r.ctx.Err() != nil {
			return
		}
		if last != "" && last != lastID {
			lastID, fails = last, 0
		} else {
			fails++
		}
		if rt > 0 {
			retry = rt
		} else {
			retry = resumeDelay
		}
	}
	r.opts.Log.Warn("remote server's standalone stream keeps failing; notifications between calls are lost")
}

// resume waits for retry (resumeDelay if zero and lastID is set) and GETs
// the URL, with Last-Event-ID when lastID is set.
func (r *Transport) resume(ctx context.Context, lastID string, retry time.Duration) (*http.Response, error) {
	if retry == 0 && lastID != "" {
		retry = resumeDelay
	}
	if retry > 0 {
		t := time.NewTimer(retry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.opts.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	if err := r.setHeaders(r.ctx, req); err != nil {
		return nil, err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, causeOf(err)
	}
	if lastID != "" && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		resp.Body.Close()
		return nil, errors.New(resp.Status)
	}
	return resp, nil
}

// readEvents delivers the message events of body until it ends or, if id
// is set, the response to id was delivered (done). It returns the last
// event id and the retry delay the server named.
func (r *Transport) readEvents(body io.Reader, id []byte) (done bool, lastID string, retry time.Duration) {
	sr := newSSEReader(body)
	for {
		ev, err := sr.next()
		if err != nil {
			if errors.Is(err, errEventTooLarge) {
				r.opts.Log.Warn("remote server sent an event over the size limit", "limit", wire.MaxMessage)
			}
			return false, lastID, retry
		}
		if ev.id != "" {
			lastID = ev.id
		}
		if ms, err := strconv.Atoi(ev.retry); err == nil && ms >= 0 {
			retry = time.Duration(ms) * time.Millisecond
		}
		if len(ev.data) == 0 || ev.name != "" && ev.name != "message" {
			continue
		}
		m, err := wire.Decode(ev.data)
		if err != nil {
			r.opts.Log.Warn("dropped an event that is not a JSON-RPC message", "err", err)
			continue
		}
		isAnswer := id != nil && m.IsResponse() && bytes.Equal(m.ID, id)
		r.deliver(ev.data)
		if isAnswer {
			return true, lastID, retry
		}
	}
}

// deliver hands one message to conn, on one line; it learns the
// negotiated version from the answer to initialize.
func (r *Transport) deliver(data []byte) {
	data = bytes.TrimSpace(data)
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, data) != nil {
			return
		}
		data = c.Bytes()
	}
	r.mu.Lock()
	initID := r.initID
	r.mu.Unlock()
	if initID != "" {
		if m, err := wire.Decode(data); err == nil && m.IsResponse() && string(m.ID) == initID && m.Result != nil {
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(m.Result, &res) == nil {
				r.mu.Lock()
				r.version, r.initID = res.ProtocolVersion, ""
				r.mu.Unlock()
			}
		}
	}
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	_, _ = r.out.Write(line) // fails only when the transport has ended
}

// deliverError answers the request id with a transport error.
func (r *Transport) deliverError(id []byte, msg string) {
	e, _ := json.Marshal(map[string]any{"code": codeTransport, "message": msg})
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":`)
	b.Write(e)
	b.WriteString("}")
	r.deliver(b.Bytes())
}

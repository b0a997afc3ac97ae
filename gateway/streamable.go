package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway serves Streamable HTTP (/mcp) itself. A session's input is
// the messages POSTed to it, handed to the session as the client wrote
// them, as on stdio; what the session writes goes out on the stream of
// the request it belongs to — the response stream of a POST carries its
// calls' progress, the requests made to the client while serving them, and
// their responses — and everything else on the standalone GET stream.
// Events are numbered per stream and kept in an event store, so that a
// client that lost a stream can resume it (GET with Last-Event-ID). Each
// stream's events are written by the goroutine serving its request, from
// a bounded queue (streamhttp.Queue), never by the one that produced them:
// a client that stops reading holds up only its own stream, and one whose
// queues go beyond its session's budget ends the session (overflowed).
// docs/http.md says why go-sdk's transport is not used.

// httpSession is one Streamable HTTP session as a client stream.
type httpSession struct {
	id    string         // Mcp-Session-Id; "" when sessionless
	store mcp.EventStore // nil: streams cannot be resumed (sessionless)
	in    chan inMsg     // POSTed messages, decoded, to the session's reader
	done  chan struct{}  // closed by Close
	stop  func()         // ends the gateway session serving it
	once  sync.Once
	out   *streamhttp.Budget // the byte budget of the session's stream queues
	log   *slog.Logger
	// errorStatus: a lone call answered with an error sets the HTTP status
	// (per-request era, errorStatus).
	errorStatus bool
	// front is the session's front once started: each request to the
	// session must come from its principal (servedTo).
	front atomic.Pointer[front]
	// expires: a sealed session's end (sessionseal.go); zero for none.
	// issuer: the replica that issued the sealed session this is a copy
	// of, when not this one (adopt); "" otherwise. Both set before the
	// session is shared.
	expires time.Time
	issuer  string

	mu        sync.Mutex
	streams   map[string]*sseStream // live streams by id; "" is the standalone GET stream
	calls     map[string]*sseStream // the client's requests in flight (exact id bytes) → their POST's stream
	attached  int                   // HTTP requests being served
	idleSince time.Time             // when the session last became idle (no request, no call)
}

// sseStream is one event stream of a session: a POST's response, or the
// standalone GET stream (id "").
type sseStream struct {
	id string

	pending int // requests not answered yet (POST streams)

	mu   sync.Mutex        // orders the events: index, store, queue
	last int               // index of the last event, -1 before the first
	q    *streamhttp.Queue // the events (SSE frames) for the writer of the request attached; nil while none is
	end  chan struct{}     // closed when the stream is complete: its request returns

	// A POST's response is started by its first message, not before: a
	// lone call answered before anything else is sent as one JSON
	// response, which the client reads at once; anything else starts the
	// event stream (prime: with a priming event first).
	started bool
	lone    bool // the POST holds one call
	prime   bool
	whole   bool // the queue holds a lone call's answer, for the writer to send as JSON
}

// httpSessionOptions configure an httpSession.
type httpSessionOptions struct {
	ID          string         // "" when sessionless
	Store       mcp.EventStore // nil: streams cannot be resumed
	Stop        func()         // ends the gateway session serving it
	BufferBytes int64          // the budget of its outgoing queues
	Logger      *slog.Logger
	// ErrorStatus: a lone call answered with an error sets the HTTP status
	// of the answer (a POST of the per-request era, headers.go's errorStatus).
	ErrorStatus bool
}

func newHTTPSession(o httpSessionOptions) *httpSession {
	id, store := o.ID, o.Store
	h := &httpSession{
		id:          id,
		store:       store,
		in:          make(chan inMsg),
		done:        make(chan struct{}),
		stop:        o.Stop,
		out:         streamhttp.NewBudget(o.BufferBytes),
		log:         o.Logger,
		errorStatus: o.ErrorStatus,
		streams:     make(map[string]*sseStream),
		calls:       make(map[string]*sseStream),
		idleSince:   time.Now(),
	}
	if id != "" {
		h.streams[""] = &sseStream{last: -1}
		if store != nil {
			_ = store.Open(context.Background(), id, "")
		}
	}
	return h
}

// Read returns the next POSTed message, as the front decoded it
// (readMessages); io.EOF once the session is closed.
func (h *httpSession) Read(wait func()) (inMsg, error) {
	if wait != nil {
		wait()
	}
	select {
	case msg := <-h.in:
		return msg, nil
	case <-h.done:
		return inMsg{}, io.EOF
	}
}

// Send writes the message on the stream of the POST that sent the request
// it belongs to (WriteFor); one that belongs to no request goes to the
// standalone stream (or, with none open, only to the event store). Every
// event is flushed as it is written: nothing is held, and a flush has
// nothing to do.
func (h *httpSession) Send(m outMsg) error {
	var msg []byte
	if !m.empty() {
		msg = m.message() // joined: the event store keeps it
	} else if !m.final {
		return nil
	}
	return h.WriteFor(m.id, m.key, msg, m.final)
}

// Gone is false: an HTTP session ends by its own rules (DELETE, idle
// expiry, a client that does not read).
func (h *httpSession) Gone() bool { return false }

// Close ends the session: every stream's request returns, and later
// writes are dropped.
func (h *httpSession) Close() error {
	h.once.Do(func() {
		close(h.done)
		h.stop()
		if h.store != nil {
			_ = h.store.SessionClosed(context.Background(), h.id)
		}
	})
	return nil
}

func (h *httpSession) closed() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// WriteFor writes msg on the stream of the POST that sent the request id;
// a message for no request in flight goes to the standalone stream. A
// final message completes the request; a POST's stream ends with its last
// request's.
func (h *httpSession) WriteFor(id json.RawMessage, key string, msg []byte, final bool) error {
	h.mu.Lock()
	st, ok := h.calls[string(id)]
	if ok && final {
		delete(h.calls, string(id))
		h.becameIdle()
	}
	if !ok {
		st = h.streams[""]
	}
	h.mu.Unlock()
	if st == nil || h.closed() {
		return nil // sessionless: nothing outside a request can reach the client
	}
	complete, err := st.event(h, key, msg, ok && final)
	if complete {
		h.mu.Lock()
		delete(h.streams, st.id)
		h.mu.Unlock()
		if es, ok := h.store.(*streamhttp.EventStore); ok {
			es.StreamDone(h.id, st.id)
		}
	}
	return err
}

// overflowed ends a session whose client does not read what it is sent:
// its streams' requests return, its calls are cancelled, and its id gets
// 404 from now on. The other sessions never waited for it.
func (h *httpSession) overflowed(err error) {
	if h.closed() {
		return
	}
	h.log.Warn("http session ended: its client does not read its stream", "session", h.id, "err", err)
	_ = h.Close()
}

// becameIdle records when the session last had nothing in flight; h.mu is
// held.
func (h *httpSession) becameIdle() {
	if h.attached == 0 && len(h.calls) == 0 {
		h.idleSince = time.Now()
	}
}

// idle reports whether the session has had no request, no call in flight
// and no open stream since before cutoff.
func (h *httpSession) idle(cutoff time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attached == 0 && len(h.calls) == 0 && h.idleSince.Before(cutoff)
}

// attach counts an HTTP request being served; the returned func ends it.
func (h *httpSession) attach() func() {
	h.mu.Lock()
	h.attached++
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.attached--
		h.becameIdle()
		h.mu.Unlock()
	}
}

// event numbers msg, stores it and queues it for the stream's writer, if a
// request is attached; final says it answers one of the stream's requests,
// and the last of them completes the stream (reported), in the same
// critical section as it is queued: no answer can be queued after the
// stream's end. A nil msg only answers. It never waits for the client.
func (st *sseStream) event(h *httpSession, key string, msg []byte, final bool) (complete bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if final {
		st.pending--
		complete = st.pending == 0
	}
	if !st.started && st.q != nil && msg != nil {
		if complete && st.lone {
			// The whole answer: one JSON response, nothing to resume.
			st.started, st.whole = true, true
			close(st.end)
			st.end = nil
			if err := st.q.Put("", msg); err != nil {
				h.overflowed(err)
			}
			return complete, nil
		}
		st.start(h)
	}
	if msg != nil {
		st.last++
		if h.store != nil {
			err = h.store.Append(context.Background(), h.id, st.id, msg)
		}
		if st.q != nil {
			if qerr := st.q.Put(key, streamhttp.Frame("message", st.eventID(h), msg)); qerr != nil {
				h.overflowed(qerr)
				return complete, nil
			}
		}
	}
	if complete && st.end != nil {
		close(st.end)
		st.end = nil
	}
	return complete, err
}

// start starts a POST's event stream: the priming event, whose id lets
// the client resume the stream before its first message. st.mu is held.
func (st *sseStream) start(h *httpSession) {
	st.started = true
	if h.store != nil {
		_ = h.store.Open(context.Background(), h.id, st.id)
	}
	if st.prime {
		st.last++
		_ = h.store.Append(context.Background(), h.id, st.id, nil)
		if st.q != nil {
			_ = st.q.Put("", streamhttp.Frame("prime", st.eventID(h), nil))
		}
	}
}

// attach gives the stream a new queue, for the writer of a request that
// attaches to it; st.mu is held.
func (st *sseStream) attach(h *httpSession) *streamhttp.Queue {
	st.q = streamhttp.NewQueue(h.out)
	return st.q
}

// detach forgets q, if it is still the stream's queue (its request is the
// one attached), and what it holds: later events go only to the event
// store.
func (st *sseStream) detach(q *streamhttp.Queue) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.q == q {
		q.Drop()
		st.q = nil
	}
}

// pump is a stream's writer: it writes what is queued for w until the
// stream is complete, the client goes, or the session closes. headers
// says whether the response's headers were written already (a GET); a
// POST's are written with its first event, or its lone call's answer.
// prime, if not nil, fires when a POST's stream should start without a
// message.
func (h *httpSession) pump(ctx context.Context, st *sseStream, w http.ResponseWriter, q *streamhttp.Queue, end <-chan struct{}, headers bool, prime <-chan time.Time) {
	defer st.detach(q)
	rc := http.NewResponseController(w)
	cut := streamhttp.CutOnClose(h.done, rc)
	defer cut.Stop()
	for {
		complete := false
		select {
		case <-q.Wake():
		case <-end:
			complete = true
		case <-prime:
			prime = nil
			st.mu.Lock()
			if !st.started && st.q == q {
				st.start(h)
			}
			st.mu.Unlock()
			continue
		case <-ctx.Done():
			return
		case <-h.done:
			return
		}
		st.mu.Lock()
		whole := st.whole
		st.mu.Unlock()
		batch := q.Take()
		if whole && len(batch) > 0 && !headers {
			// The lone call's answer, first in the queue: anything
			// after it came late for a call that has ended.
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(batch[0])))
			if h.errorStatus {
				if m, err := wire.Decode(batch[0]); err == nil && m.Error != nil {
					var e struct {
						Code int64
						Data json.RawMessage
					}
					if json.Unmarshal(m.Error, &e) == nil && errorStatus(e.Code) != 0 {
						if e.Code == codeRateLimited {
							setRetryAfter(w, e.Data) // as every 429 of the gateway
						}
						w.WriteHeader(errorStatus(e.Code))
					}
				}
			}
			_ = cut.Do(func() error { _, err := w.Write(batch[0]); return err })
			q.Written()
			return
		}
		done := complete || whole
		if len(batch) > 0 || done && !headers {
			// A stream that ends with nothing written (its call was
			// cancelled before it started) is still an event stream:
			// a response without a Content-Type breaks clients.
			if !headers {
				w.Header().Set("Content-Type", "text/event-stream")
				headers = true
			}
			// WriteFrames flushes the headers of an empty one too.
			err := cut.Do(func() error { return streamhttp.WriteFrames(w, rc, batch) })
			q.Written()
			if err != nil {
				return // the client is gone; it may resume from the store
			}
		}
		if done {
			return
		}
	}
}

// primeAfter is how long a POST's event stream waits for its first
// message before it starts without one (start), so that the client has an
// event id to resume from during a long call.
const primeAfter = 5 * time.Millisecond

// eventID names the stream's last event, if it can be resumed.
func (st *sseStream) eventID(h *httpSession) string {
	if h.store == nil {
		return ""
	}
	return streamhttp.EventID(st.id, st.last)
}

// primingVersion is the first revision whose clients expect a POST's
// stream to start with an event of empty data carrying an id, so that it
// can be resumed before its first message.
const primingVersion = "2025-11-25"

// post serves a POST of messages to the session. Calls are answered on the
// POST's event stream, which ends with their last response; a POST without
// calls is accepted (202) once the session has read it.
func (h *httpSession) post(w http.ResponseWriter, r *http.Request, msgs []inMsg, calls []json.RawMessage, version string, initialize bool) {
	if h.closed() {
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return
	}
	detach := h.attach()
	defer detach()
	if len(calls) == 0 {
		if !h.deliver(msgs) {
			refuseHTTP(w, http.StatusNotFound, "session is closing")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := &sseStream{id: rand.Text(), pending: len(calls), last: -1, end: make(chan struct{}),
		lone: len(calls) == 1, prime: h.store != nil && version >= primingVersion}
	q := st.attach(h)
	end := st.end
	h.mu.Lock()
	for _, id := range calls {
		// In flight already (twice in one batch is refused by readPOST):
		// its answers could not be told apart.
		if _, dup := h.calls[string(id)]; dup {
			h.mu.Unlock()
			writeJSONError(w, http.StatusBadRequest, appendError(nil, id, errDuplicateID))
			return
		}
	}
	h.streams[st.id] = st
	for _, id := range calls {
		h.calls[string(id)] = st
	}
	h.mu.Unlock()

	hdr := w.Header()
	hdr.Set("Cache-Control", "no-cache, no-transform")
	if initialize && h.id != "" {
		hdr.Set(sessionIDHeader, h.id)
	}
	var prime <-chan time.Time
	if st.prime {
		t := time.NewTimer(primeAfter)
		defer t.Stop()
		prime = t.C
	}
	// Not cut short when the client goes: the calls are read already and
	// their events are kept for a resume.
	h.deliver(msgs)
	h.pump(r.Context(), st, w, q, end, false, prime)
}

// deliver hands messages to the session's reader, in order; false if the
// session closed first.
func (h *httpSession) deliver(msgs []inMsg) bool {
	for _, m := range msgs {
		select {
		case h.in <- m:
		case <-h.done:
			return false
		}
	}
	return true
}

// get serves a GET: the standalone stream, or with Last-Event-ID, the
// events of a stream after that one, then the rest of the stream if it
// is not complete yet.
func (h *httpSession) get(w http.ResponseWriter, r *http.Request) {
	if h.closed() {
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return
	}
	detach := h.attach()
	defer detach()
	streamID, after := "", -1
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		var ok bool
		if streamID, after, ok = streamhttp.ParseEventID(last); !ok {
			refuseHTTP(w, http.StatusBadRequest, "malformed Last-Event-ID "+strconv.Quote(last))
			return
		}
		if h.store == nil {
			refuseHTTP(w, http.StatusBadRequest, "stream replay unsupported")
			return
		}
	}
	h.mu.Lock()
	st := h.streams[streamID]
	h.mu.Unlock()
	live := st != nil
	if !live {
		st = &sseStream{id: streamID} // complete: only its events are replayed
	}
	st.mu.Lock()
	if live && streamID != "" && st.end == nil {
		live = false // a POST stream completed since it was looked up: replay only
	}
	if live && st.q != nil {
		st.mu.Unlock()
		refuseHTTP(w, http.StatusConflict, "stream ID conflicts with ongoing stream")
		return
	}
	var replay [][]byte
	if h.store != nil && (after >= 0 || streamID != "") {
		for data, err := range h.store.After(r.Context(), h.id, streamID, after) {
			if err != nil {
				st.mu.Unlock()
				refuseHTTP(w, http.StatusBadRequest, "failed to replay events")
				return
			}
			replay = append(replay, data)
		}
	}
	// From here on, events go to the stream's queue, after the replayed
	// ones, which this goroutine writes before it starts on the queue:
	// nothing is written while st.mu is held.
	var q *streamhttp.Queue
	var end chan struct{}
	if live {
		q = st.attach(h)
		st.started = true
		if st.end == nil {
			st.end = make(chan struct{})
		}
		end = st.end
	}
	st.mu.Unlock()
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache, no-transform")
	w.WriteHeader(http.StatusOK)
	if streamID == "" {
		// A comment, so that the headers go out at once even through a
		// proxy that waits for data: this stream may be quiet for long.
		_, _ = io.WriteString(w, ": ok\n\n")
		_ = http.NewResponseController(w).Flush()
	}
	// replay is filled only from the store, so every event has an id.
	frames := make([][]byte, 0, len(replay))
	for i, data := range replay {
		if len(data) == 0 {
			continue // a priming event
		}
		frames = append(frames, streamhttp.Frame("message", streamhttp.EventID(streamID, after+1+i), data))
	}
	if len(frames) > 0 && streamhttp.WriteFrames(w, http.NewResponseController(w), frames) != nil {
		if live {
			st.detach(q)
		}
		return
	}
	if live {
		h.pump(r.Context(), st, w, q, end, true, nil)
	}
}

// readMessages splits a POST's body into its messages (a batch is an
// array of them), decoded (readMsg): the front's checks read them, and the
// session serves them, as they are. It finds the POST's calls (the
// requests, which get answers) and whether it holds an initialize.
func readMessages(body []byte) (msgs []inMsg, calls []json.RawMessage, batch, initialize bool, err error) {
	body = bytes.TrimSpace(body)
	var raw []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, nil, true, false, err
		}
		batch = true
		if len(raw) == 0 {
			return nil, nil, true, false, errors.New("empty batch")
		}
	} else {
		raw = []json.RawMessage{body}
	}
	msgs = make([]inMsg, 0, len(raw))
	for _, b := range raw {
		m := readMsg(b)
		if m.bad != nil {
			return nil, nil, batch, false, m.bad
		}
		if m.IsCall() {
			calls = append(calls, m.ID)
			initialize = initialize || m.Method == "initialize"
		}
		msgs = append(msgs, m)
	}
	return msgs, calls, batch, initialize, nil
}

// servedTo reports whether the session serves a request of ctx.
func (h *httpSession) servedTo(ctx context.Context) bool { return servedTo(&h.front, ctx) }

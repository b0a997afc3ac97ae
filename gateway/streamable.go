package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway serves Streamable HTTP (/mcp) itself. A session's input is
// the messages POSTed to it, handed to the session as the client wrote
// them, as on stdio; what the session writes goes out on the stream of
// the request it belongs to — the response stream of a POST carries its
// calls' progress, the requests made to the client while serving them, and
// their responses — and everything else on the standalone GET stream.
// Events are numbered per stream and kept in an event store, so that a
// client that lost a stream can resume it (GET with Last-Event-ID).
// docs/http.md says why go-sdk's transport is not used.

// httpSession is one Streamable HTTP session as a client stream.
type httpSession struct {
	id    string         // Mcp-Session-Id; "" when stateless
	store mcp.EventStore // nil: streams cannot be resumed (stateless)
	in    chan []byte    // POSTed messages, to the session's reader
	done  chan struct{}  // closed by Close
	stop  func()         // ends the gateway session serving it
	once  sync.Once

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

	pending int // requests not answered yet (POST streams); guarded by httpSession.mu

	mu   sync.Mutex          // orders the events: index, store, write
	last int                 // index of the last event, -1 before the first
	w    http.ResponseWriter // the request the stream is written to; nil while none is
	end  chan struct{}       // closed when the stream is complete: its request returns

	// A POST's response is started by its first message, not before: a
	// lone call answered before anything else is sent as one JSON
	// response, which the client reads at once; anything else starts the
	// event stream (prime: with a priming event first).
	started bool
	lone    bool // the POST holds one call
	prime   bool
}

func newHTTPSession(id string, store mcp.EventStore, stop func()) *httpSession {
	h := &httpSession{
		id:        id,
		store:     store,
		in:        make(chan []byte),
		done:      make(chan struct{}),
		stop:      stop,
		streams:   make(map[string]*sseStream),
		calls:     make(map[string]*sseStream),
		idleSince: time.Now(),
	}
	if id != "" {
		h.streams[""] = &sseStream{last: -1}
		if store != nil {
			_ = store.Open(context.Background(), id, "")
		}
	}
	return h
}

// Read returns the next POSTed message; io.EOF once the session is closed.
func (h *httpSession) Read() ([]byte, string, error) {
	select {
	case msg := <-h.in:
		return msg, "", nil
	case <-h.done:
		return nil, "", io.EOF
	}
}

func (h *httpSession) More() bool { return false }

// Write writes a message that belongs to no request: on the standalone
// stream (or, with none open, only to the event store).
func (h *httpSession) Write(msg []byte) error { return h.WriteFor(nil, msg, false) }

// WriteParts writes the message the parts make, joined: the event store
// keeps it.
func (h *httpSession) WriteParts(parts ...[]byte) error { return h.Write(bytes.Join(parts, nil)) }

// Buffer writes at once: each event is flushed as it is written.
func (h *httpSession) Buffer(msg []byte) error { return h.Write(msg) }

// BufferLatest writes at once too: what belongs to a call goes through
// WriteFor, on the call's own stream.
func (h *httpSession) BufferLatest(_ string, msg []byte) error { return h.Write(msg) }

func (h *httpSession) Flush() error { return nil }

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
func (h *httpSession) WriteFor(id json.RawMessage, msg []byte, final bool) error {
	h.mu.Lock()
	st, ok := h.calls[string(id)]
	complete := false
	if ok && final {
		delete(h.calls, string(id))
		st.pending--
		if complete = st.pending == 0; complete {
			delete(h.streams, st.id)
		}
		h.becameIdle()
	}
	if !ok {
		st = h.streams[""]
	}
	h.mu.Unlock()
	if st == nil || h.closed() {
		return nil // stateless: nothing outside a request can reach the client
	}
	return st.event(h, msg, complete)
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

// event numbers msg, stores it and writes it to the stream's request, if
// one is attached; complete ends the stream. A nil msg only completes.
func (st *sseStream) event(h *httpSession, msg []byte, complete bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.started && st.w != nil && msg != nil {
		if complete && st.lone {
			// The whole answer: one JSON response, nothing to resume.
			st.started = true
			st.w.Header().Set("Content-Type", "application/json")
			st.w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
			_, err := st.w.Write(msg)
			close(st.end)
			st.end, st.w = nil, nil
			return err
		}
		st.start(h)
	}
	var err error
	if msg != nil {
		st.last++
		if h.store != nil {
			err = h.store.Append(context.Background(), h.id, st.id, msg)
		}
		if st.w != nil {
			if werr := writeSSE(st.w, "message", st.eventID(h), msg); werr != nil {
				st.w = nil // the client is gone; it may resume from the store
				if h.store == nil {
					err = werr
				}
			}
		}
	}
	if complete && st.end != nil {
		close(st.end)
		st.end, st.w = nil, nil
	}
	return err
}

// start starts a POST's event stream: the headers, and the priming event
// whose id lets the client resume the stream before its first message.
// st.mu is held.
func (st *sseStream) start(h *httpSession) {
	st.started = true
	if h.store != nil {
		_ = h.store.Open(context.Background(), h.id, st.id)
	}
	st.w.Header().Set("Content-Type", "text/event-stream")
	if st.prime {
		st.last++
		_ = h.store.Append(context.Background(), h.id, st.id, nil)
		_ = writeSSE(st.w, "prime", st.eventID(h), nil)
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
	return st.id + "_" + strconv.Itoa(st.last)
}

// writeSSE writes one event and flushes it.
func writeSSE(w http.ResponseWriter, name, id string, data []byte) error {
	buf := make([]byte, 0, len(data)+len(id)+32)
	if name != "" {
		buf = append(append(append(buf, "event: "...), name...), '\n')
	}
	if id != "" {
		buf = append(append(append(buf, "id: "...), id...), '\n')
	}
	buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// primingVersion is the first revision whose clients expect a POST's
// stream to start with an event of empty data carrying an id, so that it
// can be resumed before its first message.
const primingVersion = "2025-11-25"

// post serves a POST of messages to the session. Calls are answered on the
// POST's event stream, which ends with their last response; a POST without
// calls is accepted (202) once the session has read it.
func (h *httpSession) post(w http.ResponseWriter, r *http.Request, msgs [][]byte, calls []json.RawMessage, version string, initialize bool) {
	if h.closed() {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	detach := h.attach()
	defer detach()
	if len(calls) == 0 {
		if !h.deliver(msgs) {
			http.Error(w, "session is closing", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := &sseStream{id: rand.Text(), pending: len(calls), last: -1, w: w, end: make(chan struct{}),
		lone: len(calls) == 1, prime: h.store != nil && version >= primingVersion}
	end := st.end
	h.mu.Lock()
	for _, id := range calls {
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
	if st.prime {
		t := time.AfterFunc(primeAfter, func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			if !st.started && st.w != nil {
				st.start(h)
			}
		})
		defer t.Stop()
	}
	// Not cut short when the client goes: the calls are read already and
	// their events are kept for a resume.
	h.deliver(msgs)
	h.wait(r.Context(), st, w, end)
}

// deliver hands messages to the session's reader, in order; false if the
// session closed first.
func (h *httpSession) deliver(msgs [][]byte) bool {
	for _, m := range msgs {
		select {
		case h.in <- m:
		case <-h.done:
			return false
		}
	}
	return true
}

// wait holds a stream's request open until the stream is complete, the
// client goes, or the session closes; then no event is written to it.
func (h *httpSession) wait(ctx context.Context, st *sseStream, w http.ResponseWriter, end <-chan struct{}) {
	select {
	case <-end:
	case <-ctx.Done():
	case <-h.done:
	}
	st.mu.Lock()
	if st.w == w {
		st.w = nil
	}
	st.mu.Unlock()
}

// get serves a GET: the standalone stream, or with Last-Event-ID, the
// events of a stream after that one, then the rest of the stream if it
// is not complete yet.
func (h *httpSession) get(w http.ResponseWriter, r *http.Request) {
	if h.closed() {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	detach := h.attach()
	defer detach()
	streamID, after := "", -1
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		var ok bool
		if streamID, after, ok = parseEventID(last); !ok {
			http.Error(w, "malformed Last-Event-ID "+strconv.Quote(last), http.StatusBadRequest)
			return
		}
		if h.store == nil {
			http.Error(w, "stream replay unsupported", http.StatusBadRequest)
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
	if live && st.w != nil {
		st.mu.Unlock()
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return
	}
	var replay [][]byte
	if h.store != nil && (after >= 0 || streamID != "") {
		for data, err := range h.store.After(r.Context(), h.id, streamID, after) {
			if err != nil {
				st.mu.Unlock()
				http.Error(w, "failed to replay events", http.StatusBadRequest)
				return
			}
			replay = append(replay, data)
		}
	}
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
	for i, data := range replay {
		if len(data) == 0 {
			continue // a priming event
		}
		id := ""
		if h.store != nil {
			id = streamID + "_" + strconv.Itoa(after+1+i)
		}
		if writeSSE(w, "message", id, data) != nil {
			st.mu.Unlock()
			return
		}
	}
	if !live {
		st.mu.Unlock()
		return
	}
	st.w = w
	st.started = true
	if st.end == nil {
		st.end = make(chan struct{})
	}
	end := st.end
	st.mu.Unlock()
	h.wait(r.Context(), st, w, end)
}

// parseEventID splits an event id, "<stream>_<index>".
func parseEventID(id string) (stream string, index int, ok bool) {
	stream, n, found := strings.Cut(id, "_")
	if !found || strings.Contains(n, "_") {
		return "", 0, false
	}
	index, err := strconv.Atoi(n)
	if err != nil || index < 0 {
		return "", 0, false
	}
	return stream, index, true
}

// writeJSONError answers a request with a JSON-RPC error as JSON.
func writeJSONError(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// readMessages splits a POST's body into its messages (a batch is an
// array of them) and finds its calls (the requests, which get answers)
// and whether it holds an initialize.
func readMessages(body []byte) (msgs [][]byte, calls []json.RawMessage, batch, initialize bool, err error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, nil, true, false, err
		}
		batch = true
		for _, m := range raw {
			msgs = append(msgs, m)
		}
		if len(msgs) == 0 {
			return nil, nil, true, false, errors.New("empty batch")
		}
	} else {
		msgs = [][]byte{body}
	}
	for _, b := range msgs {
		m, err := wire.Decode(b)
		if err != nil {
			return nil, nil, batch, false, err
		}
		if m.IsCall() {
			calls = append(calls, m.ID)
			initialize = initialize || m.Method == "initialize"
		}
	}
	return msgs, calls, batch, initialize, nil
}

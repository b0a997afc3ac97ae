package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// A client that is gone must end its session at once, whatever it left in
// flight: its stdout was closed (a write fails with EPIPE) or it exited in
// the middle of a call. The gateway then stops gracefully — the backends
// get stdin EOF, then SIGTERM, then the group kill — instead of being
// killed by SIGPIPE (docs/errors.md).

// goneStream is a client stream that reports its first failed write.
type goneStream struct {
	clientStream
	onFail func(error)
}

func (g goneStream) Write(msg []byte) error { return g.check(g.clientStream.Write(msg)) }
func (g goneStream) WriteParts(parts ...[]byte) error {
	return g.check(g.clientStream.WriteParts(parts...))
}
func (g goneStream) Buffer(msg []byte) error { return g.check(g.clientStream.Buffer(msg)) }
func (g goneStream) Flush() error            { return g.check(g.clientStream.Flush()) }
func (g goneStream) BufferLatest(key string, msg []byte) error {
	return g.check(g.clientStream.BufferLatest(key, msg))
}

// send writes msg, which belongs to the client's request id: its response
// (final; msg is nil when the response is suppressed) or a message sent
// while serving it. A stream with a way out per request (callStreams)
// carries it there; any other writes it (or, buffered, buffers it).
func (g goneStream) send(id json.RawMessage, msg []byte, final, buffered bool) error {
	if cs, ok := g.clientStream.(callStreams); ok {
		return g.check(cs.WriteFor(id, "", msg, final))
	}
	switch {
	case msg == nil:
		return nil
	case buffered:
		return g.Buffer(msg)
	}
	return g.Write(msg)
}

// sendParts is send for a response whose message the parts make one
// after the other (WriteParts). A stream with a way out per request gets
// it joined: it keeps each message for a resume, and the parts may lie in
// a buffer that is reused.
func (g goneStream) sendParts(id json.RawMessage, parts [][]byte) error {
	if cs, ok := g.clientStream.(callStreams); ok {
		return g.check(cs.WriteFor(id, "", bytes.Join(parts, nil), true))
	}
	return g.WriteParts(parts...)
}

// sendLatest is send for a message that a later one of the same key makes
// obsolete (a call's progress): the stream may keep only the latest per
// key for a slow client (BufferLatest, or WriteFor with the key).
func (g goneStream) sendLatest(id json.RawMessage, key string, msg []byte) error {
	if cs, ok := g.clientStream.(callStreams); ok {
		return g.check(cs.WriteFor(id, key, msg, false))
	}
	return g.BufferLatest(key, msg)
}

func (g goneStream) WriterGone() bool {
	w, ok := g.clientStream.(writerGone)
	return ok && w.WriterGone()
}

func (g goneStream) check(err error) error {
	if err != nil {
		g.onFail(err)
	}
	return err
}

// writerGone is implemented by a stream that can tell, without writing,
// that nobody reads its output any more (stdio: the pipe's read end closed).
type writerGone interface{ WriterGone() bool }

// clientGone records that the client can no longer be written to; the
// session ends (sdkConn.Read reports the end of input, drain stops
// waiting). Errors after the session was closed are expected and ignored.
type clientGone struct {
	once sync.Once
	ch   chan struct{}
}

func (s *session) writeFailed(err error) {
	if s.isClosed() {
		return
	}
	s.gone.once.Do(func() {
		s.log.Warn("client is gone (write failed); stopping", "err", err)
		close(s.gone.ch)
	})
}

var errReaderGone = errors.New("the client closed its end of the output")

// goneCheck is how often drain asks the stream whether its reader left.
const goneCheck = 100 * time.Millisecond

// drainWaitGone is drain's wait for the client's reader to leave: it
// returns when the stream says so, or when stop is closed.
func (s *session) drainWaitGone(stop <-chan struct{}) {
	wg, _ := s.s.clientStream.(writerGone)
	if wg == nil {
		return
	}
	t := time.NewTicker(goneCheck)
	defer t.Stop()
	for {
		if wg.WriterGone() {
			s.writeFailed(errReaderGone)
			return
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

package gateway

import (
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
	wg, _ := s.s.(writerGone)
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

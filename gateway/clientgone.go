package gateway

import (
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

func (g goneStream) Send(m outMsg) error { return g.check(g.clientStream.Send(m)) }

// send sends msg, which belongs to the client's request id (nil: none):
// its response if final (msg is nil when the response is suppressed), else
// a message sent while serving it; buffered: it may wait for the burst's
// flush.
func (g goneStream) send(id json.RawMessage, msg []byte, final, buffered bool) error {
	return g.Send(outMsg{msg: msg, id: id, final: final, hold: buffered})
}

// sendParts is send for a response whose message the parts make one
// after the other, sent at once.
func (g goneStream) sendParts(id json.RawMessage, parts [][]byte) error {
	return g.Send(outMsg{parts: parts, id: id, final: true})
}

// sendLatest is send for a message that a later one of the same key makes
// obsolete (a call's progress): the stream may keep only the latest per
// key for a slow client.
func (g goneStream) sendLatest(id json.RawMessage, key string, msg []byte) error {
	return g.Send(outMsg{msg: msg, id: id, key: key, hold: true})
}

func (g goneStream) check(err error) error {
	if err != nil {
		g.onFail(err)
	}
	return err
}

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
	t := time.NewTicker(goneCheck)
	defer t.Stop()
	for {
		if s.s.Gone() {
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

package gateway

import (
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
)

// stdioStream is the stdio transport as a client stream (ServeStdio): a
// held message is buffered for the burst's one write, progress keeps only
// the latest per call for a slow reader, and a large result is written
// from its parts, never joined.
type stdioStream struct {
	c *stdio.Conn
	// idle is flushed by the backends' read loops at the end of each burst
	// (backends.Manager.ReadIdle); the stream marks itself in it when it
	// starts holding messages, so a stream that holds nothing is never
	// flushed. nil: there are no backends (what is held then goes out with
	// the next write or an explicit flush, Send of no parts).
	idle   *flush.Set
	marked atomic.Bool // in idle, not flushed yet
	log    *slog.Logger
}

func newStdioStream(c *stdio.Conn, idle *flush.Set, log *slog.Logger) *stdioStream {
	return &stdioStream{c: c, idle: idle, log: log}
}

func (s *stdioStream) Read(wait func()) (inMsg, error) {
	msg, bad, err := s.c.Read(wait)
	switch {
	case err != nil:
		return inMsg{}, err
	case bad != "":
		return unreadable(bad), nil
	}
	return readMsg(msg), nil
}

func (s *stdioStream) Send(m outMsg) error {
	switch {
	case m.empty() && m.final:
		return nil // a suppressed response: nothing to write, nothing to flush
	case m.empty():
		return s.c.Flush()
	case m.key != "":
		err := s.c.BufferLatest(m.key, m.message())
		s.held()
		return err
	case m.hold:
		var err error
		if m.result != nil {
			err = s.c.BufferAppend(m.appendResult)
		} else {
			err = s.c.Buffer(m.message())
		}
		s.held()
		return err
	case m.parts == nil:
		return s.c.Write(m.message())
	}
	return s.c.WriteParts(m.parts...)
}

// held marks the stream in idle after it buffered a message, unless it is
// marked already.
func (s *stdioStream) held() {
	if s.idle != nil && !s.marked.Load() && s.marked.CompareAndSwap(false, true) {
		s.idle.Mark(s)
	}
}

// Flush writes what the stream holds (flush.Writer): idle calls it.
func (s *stdioStream) Flush() {
	s.marked.Store(false) // first: what is held after this marks it again
	// A stream closed since it marked itself is flushed once more, for
	// nothing: that is no news.
	if err := s.c.Flush(); err != nil && !errors.Is(err, stdio.ErrClosed) {
		s.log.Debug("flush to client", "err", err)
	}
}

func (s *stdioStream) Gone() bool   { return s.c.WriterGone() }
func (s *stdioStream) Close() error { return s.c.Close() }

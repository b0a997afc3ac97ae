package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// logSink stands between the logger and stderr so that logging never
// blocks: a client that does not read the gateway's stderr (the pipe fills
// at 64 KiB) must not stall the goroutine that logs — the stdin reader
// logs bad input, a backend's read loop logs its records. Writes are
// copied to a bounded buffer that one goroutine writes out; when it is
// full, records are dropped and counted, and the count is written with the
// next records that fit.
type logSink struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	buf     []byte
	dropped int
	closed  bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// logSinkMax bounds the log bytes waiting for stderr.
const logSinkMax = 1 << 20

func newLogSink(w io.Writer, max int) *logSink {
	s := &logSink{w: w, max: max, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Write queues p (one log record) and never blocks on w.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.closed || len(s.buf)+len(p) > s.max {
		s.dropped++
		s.mu.Unlock()
		return len(p), nil
	}
	s.buf = append(s.buf, p...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *logSink) run() {
	defer close(s.done)
	var out []byte
	for {
		select {
		case <-s.wake:
		case <-s.stop:
			s.flush(&out)
			return
		}
		s.flush(&out)
	}
}

// flush writes what is queued, with the count of what was dropped.
func (s *logSink) flush(out *[]byte) {
	s.mu.Lock()
	*out, s.buf = s.buf, (*out)[:0]
	dropped := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	if dropped > 0 {
		*out = fmt.Appendf(*out, "mcp-gateway: %d log records dropped (stderr was not read fast enough)\n", dropped)
	}
	if len(*out) > 0 {
		_, _ = s.w.Write(*out)
	}
	if cap(*out) > 4*s.max {
		*out = nil
	}
}

// Close writes what is queued, waiting at most d for a reader of w, and
// stops the sink; later records are dropped.
func (s *logSink) Close(d time.Duration) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C: // nobody reads stderr: the process exits with the goroutine blocked
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logSink stands between the logger and stderr so that logging never
// blocks: a client that does not read the gateway's stderr (the pipe fills
// at 64 KiB) must not stall the goroutine that logs — the stdin reader
// logs bad input, a backend's read loop logs its records. Records are
// queued, up to max bytes, for one goroutine that writes them out; when
// the queue is full, records are dropped and counted, and the count is
// written with the next records that fit.
//
// The gateway's own records come first: what a backend writes (its stderr
// lines and its log notifications, which it can write without end) is
// "backend" output, and a gateway record that does not fit drops queued
// backend output, oldest first, to make room. Only a queue full of the
// gateway's own records drops one of them.
type logSink struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	queue   []sinkRecord // in the order written
	size    int          // bytes in queue
	dropped int
	closed  bool
	held    bool // Hold: records wait in the queue until Release

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// sinkRecord is one queued log record.
type sinkRecord struct {
	b       []byte
	backend bool // a backend's output, dropped first
}

// logSinkMax bounds the log bytes waiting for stderr.
const logSinkMax = 1 << 20

func newLogSink(w io.Writer, max int) *logSink {
	s := &logSink{w: w, max: max, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Write queues p (one log record of the gateway's own) and never blocks on w.
func (s *logSink) Write(p []byte) (int, error) {
	s.write(p, false)
	return len(p), nil
}

// backendWriter is the sink's way in for a backend's output.
type backendWriter struct{ s *logSink }

func (b backendWriter) Write(p []byte) (int, error) {
	b.s.write(p, true)
	return len(p), nil
}

func (s *logSink) write(p []byte, backend bool) {
	s.mu.Lock()
	if !backend && !s.closed && s.size+len(p) > s.max {
		s.dropBackend(s.size + len(p) - s.max)
	}
	if s.closed || s.size+len(p) > s.max {
		s.dropped++
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, sinkRecord{b: append([]byte(nil), p...), backend: backend})
	s.size += len(p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dropBackend drops queued backend records, oldest first, until need bytes
// are free or none is left; s.mu is held.
func (s *logSink) dropBackend(need int) {
	kept := s.queue[:0]
	for _, r := range s.queue {
		if r.backend && need > 0 {
			need -= len(r.b)
			s.size -= len(r.b)
			s.dropped++
			continue
		}
		kept = append(kept, r)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
}

func (s *logSink) run() {
	defer close(s.done)
	var spare []sinkRecord
	var out []byte
	for {
		select {
		case <-s.wake:
		case <-s.stop:
			s.flush(&spare, &out)
			return
		}
		s.flush(&spare, &out)
	}
}

// Hold keeps the records queued (up to the sink's bound, a backend's
// output dropped first) instead of writing them, until Release or Close:
// what status and tools print on the terminal is not interleaved with the
// log, which follows it.
func (s *logSink) Hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// Release writes what Hold kept, and what comes after as it comes.
func (s *logSink) Release() {
	s.mu.Lock()
	s.held = false
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// flush writes what is queued, with the count of what was dropped.
func (s *logSink) flush(spare *[]sinkRecord, out *[]byte) {
	s.mu.Lock()
	if s.held && !s.closed {
		s.mu.Unlock()
		return
	}
	queue := s.queue
	s.queue, *spare = (*spare)[:0], nil
	s.size = 0
	dropped := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	*out = (*out)[:0]
	for _, r := range queue {
		*out = append(*out, r.b...)
	}
	clear(queue)
	*spare = queue
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

// backendOutput is a slog.Handler that sends a backend's output (records
// with stream=stderr, or source=notifications/message: what backends'
// lines and log notifications are logged with) to backend and every other
// record to gateway: two handlers of one format, on the sink's two ways in.
type backendOutput struct {
	gateway, backend slog.Handler
}

func (h backendOutput) Enabled(ctx context.Context, l slog.Level) bool {
	return h.gateway.Enabled(ctx, l)
}

func (h backendOutput) Handle(ctx context.Context, r slog.Record) error {
	fromBackend := false
	r.Attrs(func(a slog.Attr) bool {
		fromBackend = a.Key == "stream" && a.Value.String() == "stderr" || a.Key == "source" && a.Value.String() == "notifications/message"
		return !fromBackend
	})
	if fromBackend {
		return h.backend.Handle(ctx, r)
	}
	return h.gateway.Handle(ctx, r)
}

func (h backendOutput) WithAttrs(as []slog.Attr) slog.Handler {
	return backendOutput{h.gateway.WithAttrs(as), h.backend.WithAttrs(as)}
}

func (h backendOutput) WithGroup(name string) slog.Handler {
	return backendOutput{h.gateway.WithGroup(name), h.backend.WithGroup(name)}
}

package streamhttp

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// ErrClosed is Cutter.Do's answer once its session is closed: no write
// begins.
var ErrClosed = errors.New("session closed")

// Cutter fails a write to a client that does not read (it would block for
// ever) once the session is closed, and only a write in progress: a
// stream's writer that is idle when the session closes returns as it
// would, and its request still ends cleanly. It serves one writer: Do is
// not called concurrently.
type Cutter struct {
	rc  *http.ResponseController
	fin chan struct{}

	mu      sync.Mutex
	writing bool
	closed  bool // the session closed: no write begins
}

// CutOnClose returns a Cutter for the writes to rc's response, which
// watches done (closed when the session is) until Stop. Every Cutter must
// be stopped.
func CutOnClose(done <-chan struct{}, rc *http.ResponseController) *Cutter {
	c := &Cutter{rc: rc, fin: make(chan struct{})}
	go func() {
		select {
		case <-done:
			c.mu.Lock()
			c.closed = true
			if c.writing {
				_ = c.rc.SetWriteDeadline(time.Now())
			}
			c.mu.Unlock()
		case <-c.fin:
		}
	}()
	return c
}

// Do runs write, which writes to the response, and returns its error, or
// ErrClosed without running it once the session is closed. If the session
// closes while write runs, the response's write deadline is set to now, so
// that a write blocked on the client fails at once.
func (c *Cutter) Do(write func() error) error {
	c.mu.Lock()
	open := !c.closed
	c.writing = open
	c.mu.Unlock()
	if !open {
		return ErrClosed
	}
	err := write()
	c.mu.Lock()
	c.writing = false
	c.mu.Unlock()
	return err
}

// Stop stops watching the session: the Cutter is not used again.
func (c *Cutter) Stop() { close(c.fin) }

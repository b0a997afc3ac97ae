package proc

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
)

// Reaper is the gateway's side of the reaper process (see RunReaper): it
// registers each child's process group while the child runs. A nil *Reaper
// is a valid no-op (no reaper configured, or Windows, where each child's
// Job Object does the reaper's job).
type Reaper struct {
	log *slog.Logger
	cmd *exec.Cmd

	mu     sync.Mutex
	w      io.WriteCloser
	failed bool // a write failed; warned once, writes stop
}

func (r *Reaper) send(verb string, pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || r.w == nil {
		return
	}
	if _, err := io.WriteString(r.w, verb+" "+strconv.Itoa(pgid)+"\n"); err != nil {
		r.failed = true
		r.log.Warn("reaper is gone; backends' own children may outlive a killed gateway", "err", err)
	}
}

// Add registers p's group: the reaper kills it if the gateway dies.
func (r *Reaper) Add(p *Process) { r.send("add", p.Pid) }

// Del unregisters p's group once it is dead and reaped (its pgid may be
// reused by then).
func (r *Reaper) Del(p *Process) { r.send("del", p.Pid) }

// Close closes the reaper's input, so it exits, and reaps it.
func (r *Reaper) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	w := r.w
	r.w = nil
	r.mu.Unlock()
	if w == nil {
		return nil
	}
	w.Close()
	if err := r.cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("reaper: %w", err)
		}
		return fmt.Errorf("reaper: %s", ee.ProcessState)
	}
	return nil
}

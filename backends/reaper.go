package backends

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// RunReaper is the whole job of the reaper helper process: it reads lines
// "add PGID" and "del PGID" from r, and when r ends (the gateway closed it,
// or died, even by SIGKILL) it SIGKILLs every process group still
// registered and returns. Pdeathsig only covers a gateway's direct
// children; the reaper covers their children too (npx → node).
//
// Malformed lines are ignored; PGIDs below 2 and the reaper's own group
// are never signalled. The error is r's read error, if any.
func RunReaper(r io.Reader) error {
	self := syscall.Getpgrp()
	groups := make(map[int]struct{})
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		verb, arg, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		pgid, err := strconv.Atoi(strings.TrimSpace(arg))
		if err != nil || pgid < 2 || pgid == self {
			continue
		}
		switch verb {
		case "add":
			groups[pgid] = struct{}{}
		case "del":
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return sc.Err()
}

// reaper is the Manager's side of the reaper process. A nil *reaper is a
// valid no-op (Options.Reaper unset).
type reaper struct {
	log *slog.Logger
	cmd *exec.Cmd

	mu     sync.Mutex
	w      io.WriteCloser
	failed bool // a write failed; warned once, writes stop
}

// startReaper starts argv with environ, in its own process group (so a
// signal to the gateway's group doesn't take it down first) and without
// Pdeathsig (it must outlive the gateway to do its job).
func startReaper(argv []string, environ []string, log *slog.Logger) (*reaper, error) {
	if len(argv) == 0 {
		return nil, nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = environ
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	return &reaper{log: log, cmd: cmd, w: w}, nil
}

func (r *reaper) send(verb string, pgid int) {
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

func (r *reaper) add(pgid int) { r.send("add", pgid) }
func (r *reaper) del(pgid int) { r.send("del", pgid) }

// close closes the reaper's input, so it exits, and reaps it.
func (r *reaper) close() error {
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

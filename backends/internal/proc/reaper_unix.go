//go:build unix

package proc

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// RunReaper is the whole job of the reaper helper process: it reads lines
// "add PGID" and "del PGID" from r, and when r ends (the gateway closed it,
// or died, even by SIGKILL) it SIGKILLs every process group still
// registered and returns. Pdeathsig (Linux only) covers a gateway's direct
// children; the reaper covers their children too (npx → node), and on
// macOS the direct children as well.
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

// StartReaper starts argv (a command that runs RunReaper on its stdin) with
// environ, in its own process group (so a signal to the gateway's group
// doesn't take it down first) and without Pdeathsig (it must outlive the
// gateway to do its job). Empty argv means no reaper: nil, nil. log (nil:
// none) gets a warning if the reaper goes away early.
func StartReaper(argv []string, environ []string, log *slog.Logger) (*Reaper, error) {
	if len(argv) == 0 {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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
	return &Reaper{log: log, cmd: cmd, w: w}, nil
}

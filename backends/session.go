package backends

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// session is one run of a backend's child: the process, the JSON-RPC
// connection on its pipes, and the goroutines that serve them (stderr,
// the crash watch, the list refresher). The supervisor starts one per
// attempt (startSession), serves it until the child dies or the gateway
// stops (serve), and ends it (teardown).
type session struct {
	b *backend
	p *proc.Process
	c *conn

	stderrDone  chan struct{}
	crashed     chan string // the crash reason, once
	stopWatch   chan struct{}
	watchDone   chan struct{}
	refreshDone chan struct{}
	refreshing  bool // the refresher was started: teardown waits for refreshDone
}

// startSession starts the child and the goroutines that read it; nil and
// the reason if the child could not be started.
func (b *backend) startSession() (*session, string) {
	p, err := startProcess(b.cfg, b.m.environ)
	if err != nil {
		reason := fmt.Sprintf("start %s: %v", b.cfg.Command, err)
		if strings.ContainsAny(b.cfg.Command, " \t") && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound)) {
			reason += " (command is one program; put its arguments in args)"
		}
		return nil, reason
	}
	b.m.reaper.Add(p)
	b.mu.Lock()
	b.pid, b.startedAt = p.Pid, time.Now()
	b.mu.Unlock()
	b.log.Debug("backend process started", "pid", p.Pid)

	s := &session{
		b:           b,
		p:           p,
		c:           newConn(b.cfg.Name, p.Stdin, b.log, b.hooks()),
		stderrDone:  make(chan struct{}),
		crashed:     make(chan string, 1),
		stopWatch:   make(chan struct{}),
		watchDone:   make(chan struct{}),
		refreshDone: make(chan struct{}),
	}
	go func() {
		defer close(s.stderrDone)
		drainStderr(p.Stderr, b.log, &b.stderr, b.logs)
	}()
	go s.c.readLoop(p.Stdout)
	go func() {
		defer close(s.watchDone)
		b.watch(p, s.c, s.stderrDone, s.stopWatch, s.crashed)
	}()
	return s, ""
}

// serve does the handshake and serves until the child dies or ctx is done.
// It returns whether the backend became ready and why it is not running
// any more.
func (s *session) serve(ctx context.Context, startupDeadline time.Time) (wasReady bool, reason string) {
	b, c := s.b, s.c
	hctx, cancel := context.WithDeadline(ctx, startupDeadline)
	l, info, err := b.handshake(hctx, c)
	cancel()
	if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == CodeRecursive {
		// A nested gateway reached through a wrapper found itself in
		// ChainEnv; it has started nothing.
		b.refused = true
		return false, "a nested gateway refused to start: " + we.Message
	}
	if err != nil {
		select {
		case r := <-s.crashed:
			return false, r
		default:
		}
		if ctx.Err() != nil {
			return false, "stopped"
		}
		return false, err.Error()
	}

	b.mu.Lock()
	b.state, b.reason = Ready, ""
	b.conn, b.lists, b.serverInfo = c, l, info
	b.mu.Unlock()
	b.settle()
	b.log.Info("backend ready", "pid", s.p.Pid, "tools", len(l.tools), "prompts", len(l.prompts), "resources", len(l.resources))
	b.m.notify.changed(b.cfg.Name)

	s.refreshing = true
	go func() {
		defer close(s.refreshDone)
		b.refreshLoop(c)
	}()

	select {
	case r := <-s.crashed:
		b.setState(Crashed, r) // watch did, unless it crashed before Ready was recorded
		b.log.Error("backend crashed", "reason", r, "stderr_tail", b.stderr.snapshot())
		b.m.notify.changed(b.cfg.Name)
		return true, r
	case <-ctx.Done():
		return true, "stopped"
	}
}

// teardown ends the session: when it returns, the process group is dead
// and reaped and every goroutine of the session has ended. The caller has
// recorded the backend's new state first.
func (s *session) teardown() {
	b, p, c := s.b, s.p, s.c
	close(s.stopWatch)
	<-s.watchDone
	var crash bool
	select {
	case <-p.Exited():
		crash = true
	default:
	}
	c.shutdown(&ServerError{Server: b.cfg.Name, State: Stopped, Reason: "stopped"})
	if s.refreshing {
		<-s.refreshDone
	}
	if crash {
		p.Kill() // whatever it left behind in its group
	} else {
		p.Stop(b.m.stopGrace)
	}
	// The group is gone: give the readers a moment to reach EOF. A
	// descendant that left the group (setsid) may still hold the pipes:
	// end it, and cut the readers loose whatever it does.
	if !waitClosed(100*time.Millisecond, c.eof, s.stderrDone) {
		if n := p.KillEscaped(); n > 0 {
			b.log.Warn("killed processes that left the backend's process group and held its pipes", "count", n)
			waitClosed(100*time.Millisecond, c.eof, s.stderrDone)
		}
	}
	p.CloseFiles()
	<-c.eof
	<-s.stderrDone
	c.wait()
	flushLogLimit(b.logs, b.log)
	b.m.reaper.Del(p)
	b.mu.Lock()
	b.pid = 0
	b.mu.Unlock()
}

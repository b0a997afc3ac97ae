package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// backend is one configured server and its supervisor. The supervisor
// goroutine (run) owns the child process and its session; everyone else
// reads the state under mu.
type backend struct {
	m       *Manager
	cfg     config.Server
	timeout time.Duration // per call
	log     *slog.Logger
	stderr  tail
	logs    *ratelimit.Bucket // stderr lines and notifications/message
	skipped bool              // set by New: Options.Self matched; never started
	// refused is set by runOnce (on the supervisor goroutine) when the child
	// answered initialize with CodeRecursive: it is Skipped, not Failed.
	refused bool
	// unrunnable is set by startChild (on the supervisor goroutine) when
	// the command cannot be run at all (not found, not executable): it is
	// Failed at once, since trying again changes nothing until the user
	// does.
	unrunnable bool
	// shortage is set by a start (on the supervisor goroutine) that failed
	// for the gateway's own lack of a resource (ResourceShortage): run
	// retries it, and it is not one of the backend's crashes.
	shortage bool
	// secrets is the digest of the secret values its last start got
	// (secrets.go); "" before one looked them up. Guarded by mu.
	secrets string
	// values masks those values in log and reason (secrets.go).
	values secretValues
	// noDiscover: the backend ended its session when asked server/discover;
	// it is initialized from then on (era.go).
	noDiscover atomic.Bool

	settled    chan struct{} // closed once the first start attempt has concluded
	settleOnce sync.Once
	refresh    chan struct{} // capacity 1: a list_changed arrived
	// stop ends the supervisor (Apply removing or replacing the backend);
	// set by startLocked. done is closed when the supervisor has ended
	// and the process tree is reaped (at once for one never started).
	stop  context.CancelFunc
	done  chan struct{}
	began time.Time // when startLocked ran; guarded by Manager.mu

	mu        sync.Mutex
	sandbox   *Sandbox // as applied at the last start; nil when off
	state     State
	reason    string        // why it is not ready: crash reason, start error, ...
	moved     chan struct{} // closed and replaced at every change of state
	pid       int
	startedAt time.Time
	restarts  int
	conn      *conn   // the session while Ready
	live      surface // what the session answered and listed; while Ready
	// snap is what the backend looked like when it was last ready, in an
	// earlier run (snapshot.go), shown while its first start is under
	// way; snapSum is the hash of the snapshot file last read or written.
	snap    *surface
	snapSum [32]byte      // guarded by saveMu once the backend runs
	saveMu  sync.Mutex    // one saveSnapshot at a time
	pending listKind      // lists a list_changed asked to refresh
	view    trustView     // what the trust layer shows of the surface shown (trust.go)
	auth    *oauth.Client // a remote server's OAuth client; nil if none

	// A server reached per caller (upstream.go): pool is its callers'
	// sessions; each of those is a backend whose parent is the server's
	// and whose requests upstream authorizes. publisher is the session
	// whose lists the server shows (guarded by mu).
	pool      *callerPool
	parent    *backend
	upstream  *callerAuth
	publisher *backend
	retired   atomic.Bool // a caller's session its pool closed
	caller    string      // a caller's session's: its Caller.Subject
}

// settle records that the first start attempt has concluded. A backend
// whose snapshot clients were shown until now shows its live lists from
// here on, or none: they are told.
func (b *backend) settle() {
	b.settleOnce.Do(func() {
		close(b.settled)
		b.mu.Lock()
		shown := b.snap != nil && b.state != Ready
		b.mu.Unlock()
		if shown {
			b.listsChanged()
		}
	})
}

// settledYet reports whether the first start attempt has concluded.
func (b *backend) settledYet() bool {
	select {
	case <-b.settled:
		return true
	default:
		return false
	}
}

// setStateLocked changes the state and wakes whoever waits for a change;
// b.mu is held.
func (b *backend) setStateLocked(s State, reason string) {
	// A reason may quote the server (a remote's status line, an error of
	// its own): never its secrets, which status and clients would show.
	b.state, b.reason = s, b.values.mask(reason)
	if b.moved != nil {
		close(b.moved)
	}
	b.moved = make(chan struct{})
}

// setState changes the state; leaving Ready drops the session and the lists.
// It reports whether the backend was Ready before (its lists changed).
func (b *backend) setState(s State, reason string) (wasReady bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasReady = b.state == Ready
	b.setStateLocked(s, reason)
	if s != Ready {
		b.conn = nil
		b.live = surface{}
	}
	return wasReady
}

// shownLocked is what clients are shown of b now: its live surface while
// it is ready, its snapshot while its first start is under way, else nil;
// b.mu is held.
func (b *backend) shownLocked() *surface {
	switch {
	case b.state == Ready:
		return &b.live
	case b.snap != nil && b.state == Starting && !b.settledYet():
		return b.snap
	}
	return nil
}

// readyConn returns the session of a Ready backend, or the *ServerError a
// call to it fails with.
func (b *backend) readyConn() (*conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Ready && b.conn != nil {
		return b.conn, nil
	}
	return nil, b.notRunningLocked()
}

// isStarting reports whether b is starting: a call to it waits
// (awaitConn) rather than fails.
func (b *backend) isStarting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == Starting
}

// awaitConn is readyConn for a request that may wait for a backend still
// starting: it returns b's session once b is ready, or the error of a
// start that failed, at once. Waiting ends with ctx, or at deadline (if
// not zero) with a *TimeoutError of method and name that says the backend
// was still starting.
func (b *backend) awaitConn(ctx context.Context, deadline time.Time, method, name string) (*conn, error) {
	var expired <-chan time.Time
	for {
		b.mu.Lock()
		if b.state == Ready && b.conn != nil {
			c := b.conn
			b.mu.Unlock()
			return c, nil
		}
		if b.state != Starting {
			err := b.notRunningLocked()
			b.mu.Unlock()
			return nil, err
		}
		moved := b.moved
		b.mu.Unlock()
		if expired == nil && !deadline.IsZero() {
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-moved:
		case <-expired:
			return nil, &TimeoutError{Server: b.cfg.Name, Method: method, Name: name, Timeout: b.timeout, Starting: true}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (b *backend) notRunningLocked() *ServerError {
	reason := b.reason
	if reason == "" {
		reason = string(b.state)
	}
	e := &ServerError{Server: b.cfg.Name, State: b.state, Reason: reason}
	switch b.state {
	case Crashed, Failed, Restarting:
		e.StderrTail = b.stderr.snapshot()
	}
	return e
}

// loginPoll is how often a backend that needs sign-in looks for one.
const loginPoll = 500 * time.Millisecond

// run supervises the backend until ctx is done (Close) or it gives up.
func (b *backend) run(ctx context.Context) {
	defer b.settle()
	var crashes []time.Time
	for attempt := 0; ; attempt++ {
		wasReady, reason, teardown := b.runOnce(ctx, time.Now().Add(b.m.startLimit))
		if ctx.Err() != nil {
			// Close: the session is failed with Stopped by teardown.
			wasReady := b.setState(Stopped, "stopped")
			if teardown != nil {
				teardown()
			}
			if wasReady {
				b.listsChanged()
			}
			return
		}
		if b.refused {
			b.setState(Skipped, reason)
			b.settle()
			b.log.Warn("not starting a server that would run this gateway again", "reason", reason)
			if teardown != nil {
				teardown()
			}
			return
		}
		if le := b.auth.LoginNeeded(); le != nil {
			// Not a crash: nothing to retry until the user signs in.
			reason = le.Error()
			wasReady := b.setState(NeedsLogin, reason)
			b.settle()
			if teardown != nil {
				teardown()
			}
			if wasReady {
				b.listsChanged()
			}
			b.log.Warn("remote server needs sign-in", "scopes", le.Scopes, "run", "mcp-gateway login "+b.cfg.Name)
			if !b.auth.WaitLogin(ctx, loginPoll) {
				b.setState(Stopped, "stopped")
				return
			}
			crashes = nil
			b.mu.Lock()
			b.setStateLocked(Starting, "")
			b.mu.Unlock()
			continue
		}
		if b.unrunnable {
			b.setState(Failed, reason)
			b.settle()
			b.log.Error("backend cannot start", "reason", reason)
			return
		}
		shortage := b.shortage
		b.shortage = false
		if attempt == 0 && !wasReady && !shortage {
			msg := "backend failed to start"
			if exited(reason) {
				msg = "backend failed to start: its process exited"
			}
			b.log.Error(msg, "reason", reason, "stderr_tail", b.stderr.snapshot())
			if b.cfg.Restart == "never" {
				b.setState(Failed, reason)
				b.settle()
				if teardown != nil {
					teardown()
				}
				return
			}
		}
		// A crash, or a start that did not get ready: retried like a crash.
		if b.cfg.Restart == "never" && !shortage {
			b.setState(Crashed, reason)
			if teardown != nil {
				teardown()
			}
			return
		}
		now := time.Now()
		if !shortage {
			crashes = append(crashes, now)
		}
		for len(crashes) > 0 && now.Sub(crashes[0]) > b.m.crashWindow {
			crashes = crashes[1:]
		}
		if len(crashes) >= b.m.maxCrashes {
			r := fmt.Sprintf("gave up after %d crashes within %s: %s", len(crashes), b.m.crashWindow, reason)
			b.setState(Failed, r)
			if teardown != nil {
				teardown()
			}
			b.log.Error("backend failed", "reason", r)
			return
		}
		delay := b.m.backoffMax
		if n := len(crashes) - 1; n < 30 {
			delay = min(b.m.backoffBase<<max(n, 0), b.m.backoffMax)
		}
		b.setState(Restarting, reason)
		b.settle() // the first start has concluded: lists stop waiting for it
		if teardown != nil {
			teardown()
		}
		b.log.Info("restarting backend", "in", delay, "reason", reason)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			b.setState(Stopped, "stopped")
			return
		}
		b.mu.Lock()
		b.restarts++
		b.setStateLocked(Starting, "") // status: starting, with the time since the process started
		b.mu.Unlock()
	}
}

// runOnce starts a session (a child process, or a connection to a remote
// server), does the handshake and serves until the session ends or ctx is
// done. It returns whether the backend became ready, why it is not running
// any more, and teardown (nil if nothing was started), which the caller runs
// after recording the new state: when teardown returns, the process group
// is dead and reaped (or the connection closed) and every goroutine of the
// session has ended.
func (b *backend) runOnce(ctx context.Context, startupDeadline time.Time) (wasReady bool, reason string, teardown func()) {
	hctx, cancel := context.WithDeadline(ctx, startupDeadline)
	defer cancel()
	run, reason := b.resolve()
	if reason != "" {
		// Nothing to retry until the secret is set, which restarts it.
		b.unrunnable = true
		return false, reason, nil
	}
	var s *session
	switch {
	case b.m.opts.Dial != nil:
		s, reason = b.startDialed(hctx)
	case b.cfg.URL != "":
		s, reason = b.startRemote(hctx, run)
	default:
		s, reason = b.startChild(run)
	}
	if s == nil {
		return false, reason, nil
	}
	c := s.c
	refreshDone := make(chan struct{})
	refreshing := false
	teardown = func() {
		s.teardown()
		if refreshing {
			<-refreshDone
		}
	}

	// A backend waiting for the client (Options.AwaitClient) is
	// initialized once the client's capabilities are known; the start
	// limit counts the backend's own time, not the client's.
	waitFrom := time.Now()
	if r, ok := b.m.awaitClient(ctx, s.crashed); !ok {
		return false, r, teardown
	}
	if waited := time.Since(waitFrom); waited > time.Millisecond {
		cancel()
		var cancelWaited context.CancelFunc
		hctx, cancelWaited = context.WithDeadline(ctx, startupDeadline.Add(waited))
		defer cancelWaited()
	}
	sf, err := b.handshake(hctx, c)
	cancel()
	if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == CodeRecursive {
		// A nested gateway reached through a wrapper found itself in
		// config.ChainEnv; it has started nothing.
		b.refused = true
		return false, "a nested gateway refused to start: " + we.Message, teardown
	}
	if err != nil {
		select {
		case r := <-s.crashed:
			return false, r, teardown
		default:
		}
		if ctx.Err() != nil {
			return false, "stopped", teardown
		}
		return false, err.Error(), teardown
	}

	b.mu.Lock()
	b.setStateLocked(Ready, "")
	b.conn, b.live = c, *sf
	b.mu.Unlock()
	b.settle()
	l := sf.lists
	b.log.Info("backend ready", append(s.attrs, "protocol", sf.protocol, "tools", len(l.tools), "prompts", len(l.prompts), "resources", len(l.resources))...)
	b.listsChanged()
	b.saveSnapshot()

	refreshing = true
	go func() {
		defer close(refreshDone)
		b.refreshLoop(c)
	}()

	select {
	case r := <-s.crashed:
		if b.auth.RefusedLogin() != nil {
			// Not a crash: run makes it NeedsLogin (the watcher did).
			b.listsChanged()
			return true, r, teardown
		}
		b.setState(Crashed, r) // the watcher did, unless it crashed before Ready was recorded
		b.log.Error("backend crashed", "reason", r, "stderr_tail", b.stderr.snapshot())
		b.listsChanged()
		return true, r, teardown
	case <-ctx.Done():
		return true, "stopped", teardown
	}
}

// session is one started session of a backend, before its handshake.
type session struct {
	c *conn
	// crashed receives, once, why the session ended by itself.
	crashed <-chan string
	// teardown ends the session and waits for its goroutines (runOnce).
	teardown func()
	attrs    []any // what the log says of it: pid, url
}

// startChild starts the child process of run (b's configuration with its
// secrets' values) and its conn; on failure it returns the reason.
func (b *backend) startChild(run config.Server) (*session, string) {
	name := b.cfg.Name
	p, confined, err := b.m.startProcess(run, b.m.environ)
	var applied *Sandbox
	if confined != nil {
		applied = confined.applied
	}
	b.mu.Lock()
	b.sandbox = applied
	b.mu.Unlock()
	if applied != nil && len(applied.NotEnforced) > 0 && err == nil {
		b.log.Warn("backend sandbox is partial", "mode", applied.Mode, "not_enforced", applied.NotEnforced)
	}
	if err != nil {
		b.shortage = ResourceShortage(err)
		b.unrunnable = !b.shortage && unrunnable(err)
		reason := fmt.Sprintf("start %s: %v", b.cfg.Command, err)
		if b.shortage {
			reason += " (the gateway's own shortage, not the server's: retried, not counted as a crash)"
		}
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

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		drainStderr(p.Stderr, b.log, &b.stderr, b.logs)
	}()
	c := b.newConn(p.Stdin, rpcconn.PipeCapacity(p.Stdin))
	go c.ReadLoop(p.Stdout)

	crashed := make(chan string, 1) // the crash reason, once
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		b.watch(p, confined, c, stderrDone, stopWatch, crashed)
	}()

	teardown := func() {
		close(stopWatch)
		<-watchDone
		var crash bool
		select {
		case <-p.Exited():
			crash = true
		default:
		}
		c.Shutdown(&ServerError{Server: name, State: Stopped, Reason: "stopped"})
		if crash {
			p.Kill() // whatever it left behind in its group
		} else {
			p.Stop(b.m.stopGrace)
		}
		if confined != nil && confined.cgroup != nil {
			// What the server left in its cgroup (its group is dead,
			// but a descendant may have left it) goes with the cgroup.
			b.m.releaseCgroup(confined)
		}
		// The group is gone: give the readers a moment to reach EOF. A
		// descendant that left the group (setsid) may still hold the pipes:
		// end it, and cut the readers loose whatever it does.
		if !waitClosed(100*time.Millisecond, c.EOF(), stderrDone) {
			if n := p.KillEscaped(); n > 0 {
				b.log.Warn("killed processes that left the backend's process group and held its pipes", "count", n)
				waitClosed(100*time.Millisecond, c.EOF(), stderrDone)
			}
		}
		p.CloseFiles()
		<-c.EOF()
		<-stderrDone
		c.Wait()
		flushLogLimit(b.logs, b.log)
		b.m.reaper.Del(p)
		b.m.release(confined) // its proxy, after the server: nothing of it is left to connect
		b.mu.Lock()
		b.pid = 0
		b.mu.Unlock()
	}
	return &session{c: c, crashed: crashed, teardown: teardown, attrs: []any{"pid", p.Pid}}, ""
}

// watch notices the end of the child's session at once: stdout EOF or the
// process exit, whichever comes first, after giving the other (and stderr)
// a moment to catch up so that the reason is the real exit status and the
// stderr tail holds the last words. It then fails every call in flight with
// a *ServerError (Crashed) and reports the reason on crashed. Closing stop
// ends it without a report (a deliberate stop).
func (b *backend) watch(p *proc.Process, confined *confinement, c *conn, stderrDone, stop <-chan struct{}, crashed chan<- string) {
	select {
	case <-c.EOF():
		t := time.NewTimer(500 * time.Millisecond)
		select {
		case <-p.Exited():
		case <-t.C:
		case <-stop:
		}
		t.Stop()
	case <-p.Exited():
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-c.EOF():
		case <-t.C:
		case <-stop:
		}
		t.Stop()
	case <-stop:
		return
	}
	select {
	case <-stop:
		return
	default:
	}
	reason := "closed its stdout"
	select {
	case <-c.EOF():
		if c.EOFReason() != "" {
			reason = c.EOFReason()
		}
	default:
	}
	select {
	case <-p.Exited():
		reason = p.ExitReason()
		if r := confined.exceeded(p); r != "" {
			reason = r
		}
	default:
	}
	// The last words are in the pipe already; the bound only matters when
	// a descendant still holds stderr open, and must leave a loaded
	// machine's scheduler room to run the reader.
	t := time.NewTimer(500 * time.Millisecond)
	select {
	case <-stderrDone:
	case <-t.C:
	}
	t.Stop()
	b.sessionEnded(c, Crashed, reason, b.stderr.snapshot(), crashed)
}

// sessionEnded records that session c ended by itself, in state (Crashed,
// or NeedsLogin for a remote that refused the sign-in): the backend leaves
// Ready before the calls fail, so that a caller who sees the error also
// sees the tools gone; then the reason goes to crashed.
func (b *backend) sessionEnded(c *conn, state State, reason string, tail []string, crashed chan<- string) {
	b.mu.Lock()
	if b.conn == c {
		b.setStateLocked(state, reason)
		b.conn, b.live = nil, surface{}
	}
	b.mu.Unlock()
	c.Shutdown(&ServerError{Server: b.cfg.Name, State: state, Reason: reason, StderrTail: tail})
	crashed <- reason
}

// hooks connect a session to the Manager's callbacks.
func (b *backend) hooks() rpcconn.Hooks {
	h := rpcconn.Hooks{Notify: b.onNotification, Idle: &b.m.readIdle}
	if fn := b.m.hooks.Request; fn != nil {
		h.Request = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			// A client that never answers must not park the request
			// forever: it gets the backend's call timeout.
			if b.upstream != nil {
				// A caller's own session asks that caller only.
				ctx = context.WithValue(ctx, requestCallerKey{}, b.upstream.caller.Load().Subject)
			}
			tctx := ctx
			if b.timeout > 0 {
				var cancel context.CancelFunc
				tctx, cancel = context.WithTimeout(ctx, b.timeout)
				defer cancel()
			}
			res, err := fn(tctx, b.cfg.Name, method, params)
			var we *jsonrpc.Error
			var re *RPCError
			switch {
			case err == nil:
			case ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded):
				err = &jsonrpc.Error{Code: -32001, Message: fmt.Sprintf("the client did not answer %s within %s", method, b.timeout)} // as a timed-out call
			case !errors.As(err, &we) && errors.As(err, &re):
				err = &jsonrpc.Error{Code: re.Code, Message: re.Message, Data: re.Data} // its code reaches the backend
			}
			return res, err
		}
	}
	return h
}

// onNotification runs in the session's read loop.
func (b *backend) onNotification(method string, params json.RawMessage) {
	var kind listKind
	switch method {
	case "notifications/tools/list_changed":
		kind = listTools
	case "notifications/prompts/list_changed":
		kind = listPrompts
	case "notifications/resources/list_changed":
		kind = listResources
	case "notifications/subscriptions/acknowledged":
		// A listen is in place from here on; a change made before it
		// (after the lists were fetched, or while a listen was cut) was
		// heard by nobody: the lists it covers are fetched again.
		for key, k := range map[string]listKind{"toolsListChanged": listTools, "promptsListChanged": listPrompts, "resourcesListChanged": listResources} {
			if string(bytes.TrimSpace(wire.Member(wire.Member(params, "notifications"), key))) == "true" {
				kind |= k
			}
		}
		if kind == 0 {
			return // a resource subscription's listen
		}
	case "notifications/message", "notifications/resources/updated", "notifications/tasks/status":
		if method == "notifications/message" {
			// A log message is no answer to a request: the server's
			// secrets are masked in it for the clients too (secrets.go).
			params = b.values.maskJSON(params)
			b.logMessage(params)
		}
		if b.parent != nil && method != "notifications/tasks/status" {
			// A caller's own session: its log messages and resource
			// updates are that person's, and the clients they would go
			// to are everyone's who sees the server. The gateway's log
			// keeps the messages; a task's status goes to its owner.
			return
		}
		if fn := b.m.hooks.Notification; fn != nil {
			fn(b.cfg.Name, method, params)
		}
		return
	default:
		b.log.Debug("ignored a backend notification", "method", method)
		return
	}
	b.mu.Lock()
	b.pending |= kind
	b.mu.Unlock()
	select {
	case b.refresh <- struct{}{}:
	default:
	}
}

func (b *backend) logMessage(params json.RawMessage) {
	var p struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(params, &p)
	level := slog.LevelInfo
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	msg := string(p.Data)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		msg = s
	}
	logLimited(b.logs, b.log, level, safetext.Strip(msg, false), "logger", safetext.Strip(p.Logger, false), "source", "notifications/message")
}

// refreshLoop refetches the lists a list_changed named, while c is the
// session, and reports the change. It ends when c is shut down.
func (b *backend) refreshLoop(c *conn) {
	for {
		select {
		case <-c.Context().Done():
			return
		case <-b.refresh:
		}
		b.mu.Lock()
		kinds := b.pending
		b.pending = 0
		caps := b.live.caps
		b.mu.Unlock()
		if kinds == 0 {
			continue
		}
		l, err := b.fetch(c.Context(), c, caps, kinds, rpcconn.CallOptions{Timeout: b.timeout})
		if err != nil {
			if c.Context().Err() != nil {
				return // the session ended (a stop, a crash): nothing to refresh
			}
			b.log.Warn("refreshing lists after list_changed failed", "err", err)
			continue
		}
		b.mu.Lock()
		if b.conn != c {
			b.mu.Unlock()
			return
		}
		meta := maps.Clone(b.live.lists.meta) // the lists not refetched keep theirs
		hints := maps.Clone(b.live.lists.hints)
		refetched := func(methods ...string) {
			for _, m := range methods {
				delete(meta, m)
				if v, ok := l.meta[m]; ok {
					if meta == nil {
						meta = make(map[string]json.RawMessage)
					}
					meta[m] = v
				}
				if hints == nil {
					hints = make(map[string]CacheHint)
				}
				hints[m] = l.hints[m]
			}
		}
		if kinds&listTools != 0 {
			b.live.lists.tools, b.live.lists.listed, b.live.lists.headers = l.tools, l.listed, l.headers
			refetched("tools/list")
		}
		if kinds&listPrompts != 0 {
			b.live.lists.prompts = l.prompts
			refetched("prompts/list")
		}
		if kinds&listResources != 0 {
			b.live.lists.resources = l.resources
			refetched("resources/list", "resources/templates/list")
		}
		b.live.lists.meta, b.live.lists.hints = meta, hints
		b.mu.Unlock()
		for i, k := range []listKind{listTools, listPrompts, listResources} {
			if kinds&k != 0 && b.parent == nil {
				// A caller's session's list is that caller's alone:
				// everyone's generations do not count it.
				b.m.listGen[i].Add(1)
			}
		}
		b.log.Info("backend lists changed", "tools", len(l.tools))
		b.listsChanged()
		b.saveSnapshot()
	}
}

// waitClosed waits up to d, in all, for every channel of chs to be closed,
// and reports whether they were.
func waitClosed(d time.Duration, chs ...<-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, ch := range chs {
		select {
		case <-ch:
		case <-t.C:
			return false
		}
	}
	return true
}

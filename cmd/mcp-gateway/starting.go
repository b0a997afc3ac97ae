package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// waitReport is when waitStarts first says what it is waiting for; on a
// terminal its line is then rewritten every waitRedraw, elsewhere (a log,
// a CI job) a new line comes each time the wait has doubled: a few lines
// for a long wait, not one every few seconds.
const (
	waitReport = 3 * time.Second
	waitRedraw = time.Second
)

// waitStarts waits until every backend's first start has concluded —
// ready or failed — or a signal, and at most --wait if given, else
// gateway.startup_timeout_ms. A server run by a package runner (npx -y,
// uvx) that has not answered yet is waited for past the startup timeout,
// until its start concludes (gateway.start_limit_ms ends it): it is most
// likely downloading its package, and a download cut short starts over at
// the next run, and may leave the runner's cache half-written. Meanwhile it
// says on stderr which backends it waits for, since when, and what each is
// doing (startingNote). It returns the servers it stopped waiting for.
func (a *app) waitStarts(ctx context.Context) []string {
	bound, explicit := a.inv.wait, a.inv.wait > 0
	if !explicit {
		bound = a.cfg.StartupTimeout()
	}
	// Wait bounds itself (and marks who kept it waiting: Manager.Wait)
	// unless a package runner may outlast the bound: then this loop
	// decides when to stop, from what each server is doing.
	within, expiry := bound, (<-chan time.Time)(nil)
	if !explicit && a.runsPackages() {
		within = 0
		deadline := time.NewTimer(bound)
		defer deadline.Stop()
		expiry = deadline.C
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.backends.Wait(wctx, within)
	}()
	p := a.newProgress("; Ctrl-C shows what is ready")
	tick := time.NewTicker(waitRedraw)
	defer tick.Stop()
	expired := false
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
			continue
		case <-expiry:
			expired, expiry = true, nil
		case <-tick.C:
		}
		if fetching := p.show(); expired && len(fetching) == 0 {
			stop()
			<-done
			break
		}
	}
	p.clear()
	if ctx.Err() != nil {
		return nil // Ctrl-C: what is ready is shown, nothing more said
	}
	return a.cutShort(bound, explicit)
}

// runsPackages reports whether a server that is to start is run by a
// package runner (packageRunner).
func (a *app) runsPackages() bool {
	for _, s := range a.backends.Status() {
		if s.State == backends.Starting {
			if _, _, ok := packageRunner(a.server(s.Name)); ok {
				return true
			}
		}
	}
	return false
}

// progress says on stderr which backends are still starting and what each
// is doing: on a terminal one line, rewritten at each show; elsewhere a
// line once the wait has lasted waitReport, then each time it has doubled.
type progress struct {
	a        *app
	hint     string // after the list: what the user can do
	begin    time.Time
	terminal bool
	next     time.Duration // the next line, when not on a terminal
	drawn    bool
}

func (a *app) newProgress(hint string) *progress {
	return &progress{a: a, hint: hint, begin: time.Now(), terminal: isTerminal(a.env.stderr), next: waitReport}
}

// show writes the progress if it is due, and returns the starting
// backends a package runner may still be downloading for.
func (p *progress) show() (fetching []string) {
	starting, fetching := p.a.startingNow()
	elapsed := time.Since(p.begin)
	if len(starting) == 0 || elapsed < waitReport {
		return fetching
	}
	line := "mcp-gateway: still starting: " + strings.Join(starting, ", ") + p.hint
	switch {
	case p.terminal:
		// One line, rewritten, cut to a terminal's usual width.
		fmt.Fprint(p.a.env.stderr, "\r\033[K"+oneLine(line, 160))
		p.drawn = true
	case elapsed >= p.next:
		fmt.Fprintln(p.a.env.stderr, line)
		p.next *= 2
	}
	return fetching
}

// clear erases the terminal's progress line, if one is drawn.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.a.env.stderr, "\r\033[K")
		p.drawn = false
	}
}

// showWhile shows the progress until done is closed (a call waiting for
// its server), then clears it.
func (p *progress) showWhile(done <-chan struct{}) {
	tick := time.NewTicker(waitRedraw)
	defer tick.Stop()
	for {
		select {
		case <-done:
			p.clear()
			return
		case <-tick.C:
			p.show()
		}
	}
}

// startingNow describes the backends still starting, for waitStarts:
// "name (12.3s: what it is doing)"; fetching are those a package runner
// runs that may still be downloading.
func (a *app) startingNow() (starting, fetching []string) {
	for _, s := range a.backends.Status() {
		if s.State != backends.Starting {
			continue
		}
		desc := s.Name + " ("
		if d, ok := startingFor(s); ok {
			desc += fmt.Sprintf("%.1fs", d.Seconds())
		} else {
			desc += "starting"
		}
		if note := a.startingNote(s); note != "" {
			desc += ": " + note
		}
		starting = append(starting, desc+")")
		if _, _, ok := packageRunner(a.server(s.Name)); ok {
			fetching = append(fetching, s.Name)
		}
	}
	return starting, fetching
}

// cutShort reports the servers still starting when the wait ran out, and
// returns their names.
func (a *app) cutShort(bound time.Duration, explicit bool) []string {
	var names []string
	for _, s := range a.backends.Status() {
		if _, ok := startingFor(s); ok {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	why := "gateway.startup_timeout_ms"
	if explicit {
		why = "--wait"
	}
	fmt.Fprintf(a.env.stderr, "mcp-gateway: not started within %s (%s): %s; a running gateway keeps starting it, up to gateway.start_limit_ms (--wait 10m waits longer here)\n",
		bound, why, strings.Join(names, ", "))
	return names
}

// server is the configuration entry of the backend named name.
func (a *app) server(name string) config.Server {
	for _, s := range a.cfg.Servers {
		if s.Name == name {
			return s
		}
	}
	return config.Server{}
}

// startingNote says what a backend that is starting is doing, as far as
// can be told from outside: the last line it wrote to stderr (masked and
// cut short, as status shows it), else, for a package runner that has not
// answered yet, that it fetches its package.
func (a *app) startingNote(s backends.Status) string { return startingNoteOf(s, a.server(s.Name)) }

// startingNoteOf is startingNote with the server's entry given: the
// dashboard's, from the file as it is now (a server added by a live
// reload is not in the configuration the process started with).
func startingNoteOf(s backends.Status, entry config.Server) string {
	if n := len(s.StderrTail); n > 0 {
		if l := oneLine(s.StderrTail[n-1], 80); l != "" {
			return l
		}
	}
	if runner, pkg, ok := packageRunner(entry); ok {
		if pkg == "" {
			return runner + " is fetching its package"
		}
		return runner + " is fetching " + pkg
	}
	return ""
}

// packageRunner reports whether s runs its server through a package runner
// that downloads the package on first use — npx, bunx, pnpm dlx, uvx — and
// which package (the first argument that is not an option, or the one
// --package / --from names).
func packageRunner(s config.Server) (runner, pkg string, ok bool) {
	if s.Command == "" {
		return "", "", false
	}
	// Either separator: a Windows path in a config read anywhere.
	base := strings.ToLower(s.Command[strings.LastIndexAny(s.Command, `/\`)+1:])
	for _, ext := range []string{".cmd", ".exe", ".bat", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	args := s.Args
	switch base {
	case "npx", "bunx", "uvx":
	case "pnpm":
		if len(args) == 0 || args[0] != "dlx" {
			return "", "", false
		}
		base, args = "pnpm dlx", args[1:]
	default:
		return "", "", false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-p" || a == "--package" || a == "--from":
			if i+1 < len(args) {
				return base, oneLine(args[i+1], 80), true
			}
		case strings.HasPrefix(a, "--package=") || strings.HasPrefix(a, "--from="):
			_, v, _ := strings.Cut(a, "=")
			return base, oneLine(v, 80), true
		case !strings.HasPrefix(a, "-"):
			return base, oneLine(a, 80), true
		}
	}
	return base, "", true
}

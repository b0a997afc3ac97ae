package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// tools is `mcp-gateway tools`: every tool a client would see, in both
// naming forms, after the backends have started (waitStarts).
func (a *app) tools(ctx context.Context) error {
	if a.inv.changes {
		return a.changes(ctx)
	}
	a.logs.sink.Hold() // the log follows the list
	defer a.logs.sink.Release()
	a.backends.Start(ctx)
	a.waitStarts(ctx)
	tools := a.gw.ToolsFor(ctx) // gateway.profile's (--profile), if one is set
	st := a.backends.Status()
	if a.inv.json {
		if err := writeJSON(a.env.stdout, map[string]any{"tools": tools, "servers": st}); err != nil {
			return err
		}
		return a.allFailed(st)
	}
	tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTRICT NAME (Claude, Codex, ...)\tSERVER\tDESCRIPTION")
	for _, t := range tools {
		server := t.Server
		if server == "" {
			server = "(gateway)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(shown(t.Name), 200), oneLine(shown(t.StrictName), 200), server, oneLine(t.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.env.stdout, "\n%d tools", len(tools))
	if p := a.cfg.Gateway.Profile; p != "" {
		fmt.Fprintf(a.env.stdout, " of profile %s", p)
	}
	var notReady, skipped []string
	for _, s := range st {
		switch s.State {
		case backends.Ready, backends.Disabled:
		case backends.Skipped:
			skipped = append(skipped, s.Name)
		default:
			state := string(s.State)
			if d, ok := startingFor(s); ok {
				state += fmt.Sprintf(" %.1fs", d.Seconds())
				if note := a.startingNote(s); note != "" {
					state += ": " + note
				}
			}
			notReady = append(notReady, fmt.Sprintf("%s (%s)", s.Name, state))
		}
	}
	if len(notReady) > 0 {
		fmt.Fprintf(a.env.stdout, "; not ready: %s (see mcp-gateway status)", strings.Join(notReady, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(a.env.stdout, "; skipped: %s (would run this gateway again)", strings.Join(skipped, ", "))
	}
	fmt.Fprintln(a.env.stdout)
	return a.allFailed(st)
}

// status is `mcp-gateway status`: start every backend and report; exit 1
// when one did not start (notReady). The log (the backends' stderr among
// it) follows the report.
func (a *app) status(ctx context.Context) error {
	a.logs.sink.Hold()
	defer a.logs.sink.Release()
	a.backends.Start(ctx)
	a.waitStarts(ctx)
	st := a.backends.Status()
	changes, flagged, trustErr := a.backends.Trust().Changes(), a.backends.Trust().Flagged(), a.backends.Trust().Err()
	if a.inv.json {
		doc := map[string]any{"servers": st}
		if len(changes) > 0 {
			doc["changes"] = changes
		}
		if len(flagged) > 0 {
			doc["flagged"] = flagged
		}
		if trustErr != nil {
			doc["pin_file_error"] = trustErr.Error()
		}
		if err := writeJSON(a.env.stdout, doc); err != nil {
			return err
		}
		return a.notReady(st)
	}
	tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPID\tSTARTED\tPROTOCOL\tTOOLS\tRESTARTS\tERROR")
	for _, s := range st {
		started := "-"
		if !s.StartedAt.IsZero() {
			started = s.StartedAt.Format(time.TimeOnly)
		}
		pid := "-"
		if s.PID != 0 {
			pid = fmt.Sprint(s.PID)
		}
		tools := fmt.Sprint(s.Tools)
		if s.Snapshot {
			tools += " (last run)"
		}
		if s.Withheld > 0 {
			tools += fmt.Sprintf(" (%d withheld)", s.Withheld)
		}
		protocol := shown(s.Protocol)
		if protocol == "" {
			protocol = "-"
		}
		errText := s.Error
		if _, ok := startingFor(s); ok && errText == "" {
			errText = a.startingNote(s) // what it is doing meanwhile
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, stateText(s), pid, started, protocol, tools, s.Restarts, oneLine(errText, 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Remote servers: where they are, and the sign-in a server waits for,
	// in full (the table's error column is cut short).
	remote := false
	for _, s := range st {
		if s.URL == "" {
			continue
		}
		if !remote {
			fmt.Fprintln(a.env.stdout, "\nremote servers:")
			remote = true
		}
		fmt.Fprintf(a.env.stdout, "  %s  %s\n", s.Name, oneLine(s.URL, 200))
		if s.State == backends.NeedsLogin {
			fmt.Fprintf(a.env.stdout, "    %s\n", oneLine(s.Error, 200))
		}
	}
	writeSandboxes(a.env.stdout, st)
	// The trust layer: what it withholds, as diffs, and what the scanner
	// found in what is shown.
	if trustErr != nil {
		fmt.Fprintf(a.env.stdout, "\nthe pin file cannot be used: every definition of a trusted server is withheld:\n  %s\n", oneLine(trustErr.Error(), 300))
	}
	if len(changes) > 0 {
		fmt.Fprintf(a.env.stdout, "\nwithheld until approved (mcp-gateway tools --changes; mcp-gateway approve SERVER [NAME]):\n")
		for _, c := range changes {
			writeChange(a.env.stdout, c)
		}
	}
	for _, f := range flagged {
		if !f.Withheld {
			fmt.Fprintf(a.env.stdout, "\n%s of %s: the scanner found injection markers:\n", defName(f.Kind, shown(f.Name)), shown(f.Server))
			writeFindings(a.env.stdout, f.Findings, "  ")
		}
	}
	for _, s := range st {
		if s.Error != "" && s.State != backends.Skipped && len(s.StderrTail) > 0 {
			fmt.Fprintf(a.env.stdout, "\n%s stderr (last lines):\n", s.Name)
			for _, l := range s.StderrTail {
				fmt.Fprintf(a.env.stdout, "  %s\n", l)
			}
		}
	}
	return a.notReady(st)
}

// stateText is a backend's state for people: a start under way says for
// how long.
func stateText(s backends.Status) string {
	if d, ok := startingFor(s); ok {
		return fmt.Sprintf("%s (%.1fs)", s.State, d.Seconds())
	}
	return string(s.State)
}

// startingFor is how long a backend has been starting, if it is.
func startingFor(s backends.Status) (time.Duration, bool) {
	if s.State != backends.Starting || s.StartedAt.IsZero() {
		return 0, false
	}
	return time.Since(s.StartedAt), true
}

// allFailed is the error of tools and status when every backend that was
// to start has failed (exit 1), after the report that says why.
func (a *app) allFailed(st []backends.Status) error {
	tried, failed := 0, 0
	for _, s := range st {
		switch s.State {
		case backends.Disabled, backends.Skipped:
			continue
		case backends.Failed, backends.Crashed, backends.Restarting:
			failed++
		}
		tried++
	}
	if tried == 0 || failed < tried {
		return nil
	}
	fmt.Fprintln(a.env.stderr, "mcp-gateway: every backend failed to start (see their errors above, or mcp-gateway status)")
	return errReported
}

// notReady is the error of status when a backend that was to start is not
// ready (exit 1), after the report that says why: it failed, crashed,
// waits to restart, or did not start within gateway.startup_timeout_ms (a
// shorter --wait is a look, not a verdict).
func (a *app) notReady(st []backends.Status) error {
	if err := a.allFailed(st); err != nil {
		return err
	}
	var bad []string
	for _, s := range st {
		switch s.State {
		case backends.Starting:
			if a.inv.wait > 0 {
				continue
			}
			fallthrough
		case backends.Failed, backends.Crashed, backends.Restarting:
			bad = append(bad, fmt.Sprintf("%s (%s)", s.Name, s.State))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	fmt.Fprintf(a.env.stderr, "mcp-gateway: not ready: %s\n", strings.Join(bad, ", "))
	return errReported
}

// writeJSON writes v as indented JSON whose strings show every character
// a terminal acts on or a person does not see (safetext.Invisible) as a \u
// escape: the encoder escapes C0 controls (ESC) but not C1 ones (CSI
// U+009B, OSC U+009D: xterm acts on them), bidi overrides or zero-width
// characters, and what a backend wrote reaches the terminal here (call,
// tools --json, status --json). The JSON means the same.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeHidden(buf.Bytes()))
	return err
}

// escapeHidden writes each invisible character of JSON text b as a \u
// escape (a pair beyond the BMP). Such characters can stand only in its
// strings, where an escape is the same character.
func escapeHidden(b []byte) []byte {
	hidden := func(r rune) bool { return r != '\n' && safetext.Invisible(r) }
	if !bytes.ContainsFunc(b, hidden) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case !hidden(r):
			out = append(out, b[:size]...)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		b = b[size:]
	}
	return out
}

// oneLine shortens s to its first line, at most n characters, without
// escape sequences or control characters (a backend's description must not
// clear the terminal or set its title).
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = safetext.Strip(s, false)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// sandboxRefused reports whether the sandbox did not let confined server
// s start (enforce could not confine it as asked, or a path would expose
// the gateway's files): its Error says why.
func sandboxRefused(s backends.Status) bool {
	return s.State == backends.Failed && strings.Contains(s.Error, "sandbox:")
}

// writeSandboxes writes the confinement of each confined server as
// applied (docs/sandbox.md): "fs ✓ net none mem — procs —", what is not
// enforced and why, and in full why enforce refused to start one.
func writeSandboxes(w io.Writer, st []backends.Status) {
	first := true
	for _, s := range st {
		sb := s.Sandbox
		if sb == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nsandboxes:")
			first = false
		}
		if sandboxRefused(s) {
			fmt.Fprintf(w, "  %s  sandbox (%s): not started: %s\n", s.Name, sb.Mode, oneLine(s.Error, 600))
			continue
		}
		fmt.Fprintf(w, "  %s  sandbox: %s (%s)\n", s.Name, sb.Summary(), sb.Mode)
		if sb.Proxy != "" {
			fmt.Fprintf(w, "    egress proxy %s admits only: %s\n", sb.Proxy, oneLine(strings.Join(sb.Allow, ", "), 300))
		}
		for _, n := range sb.NotEnforced {
			fmt.Fprintf(w, "    not enforced: %s\n", oneLine(n, 300))
		}
		if len(sb.Gaps) > 0 {
			fmt.Fprintf(w, "    not governed: %s\n", oneLine(strings.Join(sb.Gaps, "; "), 300))
		}
	}
}

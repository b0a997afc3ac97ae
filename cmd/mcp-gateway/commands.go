package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// tools is `mcp-gateway tools`: every tool a client would see, in both
// naming forms, after the backends have settled.
func (a *app) tools(ctx context.Context) error {
	a.backends.Start(ctx)
	tools := a.gw.Tools(ctx)
	if a.inv.json {
		return writeJSON(a.env.stdout, map[string]any{"tools": tools, "servers": a.backends.Status()})
	}
	tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTRICT NAME (Claude, Codex, ...)\tSERVER\tDESCRIPTION")
	for _, t := range tools {
		server := t.Server
		if server == "" {
			server = "(gateway)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(t.Name, 200), oneLine(t.StrictName, 200), server, oneLine(t.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.env.stdout, "\n%d tools", len(tools))
	var notReady, skipped []string
	for _, s := range a.backends.Status() {
		switch s.State {
		case backends.Ready, backends.Disabled:
		case backends.Skipped:
			skipped = append(skipped, s.Name)
		default:
			notReady = append(notReady, fmt.Sprintf("%s (%s)", s.Name, s.State))
		}
	}
	if len(notReady) > 0 {
		fmt.Fprintf(a.env.stdout, "; not ready: %s (see mcp-gateway status)", strings.Join(notReady, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(a.env.stdout, "; skipped: %s (would run this gateway again)", strings.Join(skipped, ", "))
	}
	fmt.Fprintln(a.env.stdout)
	return nil
}

// status is `mcp-gateway status`: start every backend and report.
func (a *app) status(ctx context.Context) error {
	a.backends.Start(ctx)
	a.backends.Wait(ctx)
	st := a.backends.Status()
	if a.inv.json {
		return writeJSON(a.env.stdout, map[string]any{"servers": st})
	}
	tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPID\tSTARTED\tTOOLS\tRESTARTS\tERROR")
	for _, s := range st {
		started := "-"
		if !s.StartedAt.IsZero() {
			started = s.StartedAt.Format(time.TimeOnly)
		}
		pid := "-"
		if s.PID != 0 {
			pid = fmt.Sprint(s.PID)
		}
		state := string(s.State)
		if s.State == backends.Starting && !s.StartedAt.IsZero() {
			// Still starting after the startup timeout: it keeps starting
			// up to gateway.start_limit_ms.
			state += fmt.Sprintf(" (%.1fs)", time.Since(s.StartedAt).Seconds())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.Name, state, pid, started, s.Tools, s.Restarts, oneLine(s.Error, 70))
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
	for _, s := range st {
		if s.Error != "" && s.State != backends.Skipped && len(s.StderrTail) > 0 {
			fmt.Fprintf(a.env.stdout, "\n%s stderr (last lines):\n", s.Name)
			for _, l := range s.StderrTail {
				fmt.Fprintf(a.env.stdout, "  %s\n", l)
			}
		}
	}
	return nil
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

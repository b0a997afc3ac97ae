package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
)

// The trust layer's commands (docs/trust.md): tools --changes, approve,
// and the audit log's records of calls and approvals.

// minDigest is the fewest hex digits of a digest approve takes: 128 bits,
// which no server can match by searching for a second definition, as it
// could the 48 bits of the 12 digits people compare (backends.ShortDigest).
const minDigest = 32

func isHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// approveWhich is approve without --digest or --all: it approves nothing,
// and shows what it could, each with the command that accepts it (an
// error); nil when nothing is withheld.
func (a *app) approveWhich() error {
	w := a.env.stdout
	var which []backends.Change
	for _, c := range a.backends.Trust().Changes() {
		if c.Server == a.inv.server && (a.inv.name == "" || c.Name == a.inv.name) {
			which = append(which, c)
		}
	}
	if len(which) == 0 {
		return nil // said by approve
	}
	what := a.inv.server
	if a.inv.name != "" {
		what = a.inv.name + " of " + what
	}
	fmt.Fprintf(w, "Nothing approved: approve accepts the definition you reviewed, named by its digest. Withheld now for %s:\n\n", what)
	for _, c := range which {
		writeChange(w, c)
	}
	if a.inv.name == "" {
		fmt.Fprintf(w, "To accept everything %s withholds now, unreviewed: mcp-gateway approve %s --all\n", a.inv.server, a.inv.server)
	}
	return errReported
}

// approveServers is the servers a command starts: approve starts only the
// server it approves for.
func (a *app) approveServers(servers []config.Server) []config.Server {
	if a.inv.command != "approve" {
		return servers
	}
	for _, s := range servers {
		if s.Name == a.inv.server {
			return []config.Server{s}
		}
	}
	return nil
}

// recordCall writes a call's record to the audit log (gateway.Options.Audit;
// nil without one): an error fails the call.
func (a *app) recordCall(r gateway.CallRecord) error {
	return a.audit.Record(audit.Entry{
		Time: r.Time, Event: "call", Client: r.Client, Identity: r.Identity,
		Server: r.Server, Tool: r.Tool, Own: r.Own, Via: r.Via, RunID: r.RunID,
		ArgsDigest: r.ArgsDigest, Args: r.Args,
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
		Outcome:    r.Outcome, Error: r.Message, ResultBytes: r.ResultBytes, Redactions: r.Redactions,
	})
}

// recordApprovals writes approvals to the audit log, if there is one. The
// approvals are made by then: an error says they are not recorded.
func (a *app) recordApprovals(approved []backends.Change, client, identity string) error {
	if a.audit == nil {
		return nil
	}
	for _, c := range approved {
		err := a.audit.Record(audit.Entry{Time: time.Now(), Event: "approve", Client: client, Identity: identity,
			Server: c.Server, Tool: c.Name, Kind: c.Kind, Digest: c.Digest, Reason: c.Reason})
		if err != nil {
			return fmt.Errorf("approved, but not recorded in the audit log: %w", err)
		}
	}
	return nil
}

// changes is `mcp-gateway tools --changes`: what the trust layer withholds
// now, with diffs, and the definitions the scanner flags.
func (a *app) changes(ctx context.Context) error {
	a.backends.Start(ctx)
	a.waitStarts(ctx)
	changes, flagged, st := a.backends.Trust().Changes(), a.backends.Trust().Flagged(), a.backends.Status()
	trustErr := a.backends.Trust().Err()
	if a.inv.json {
		doc := map[string]any{"changes": changes, "flagged": flagged, "pin_file": a.backends.Trust().PinFile()}
		if changes == nil {
			doc["changes"] = []backends.Change{}
		}
		if flagged == nil {
			doc["flagged"] = []backends.Flagged{}
		}
		if trustErr != nil {
			doc["pin_file_error"] = trustErr.Error()
		}
		if err := writeJSON(a.env.stdout, doc); err != nil {
			return err
		}
		return a.allFailed(st)
	}
	w := a.env.stdout
	if trustErr != nil {
		fmt.Fprintf(w, "The pin file cannot be used, so every definition of a trusted server is withheld:\n  %s\nRepair it, or move it away to pin again from scratch.\n\n", oneLine(trustErr.Error(), 300))
	}
	if len(changes) == 0 {
		fmt.Fprintln(w, "No definition is withheld.")
	}
	for _, c := range changes {
		writeChange(w, c)
	}
	var others []backends.Flagged
	for _, f := range flagged {
		if !f.Withheld {
			others = append(others, f)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "\nDefinitions shown to clients in which the scanner found injection markers:\n")
		for _, f := range others {
			fmt.Fprintf(w, "  %s of %s\n", defName(f.Kind, shown(f.Name)), shown(f.Server))
			writeFindings(w, f.Findings, "    ")
		}
	}
	if pins := a.backends.Trust().PinFile(); pins != "" {
		fmt.Fprintf(w, "\npin file: %s\n", pins)
	}
	return a.allFailed(st)
}

// writeChange prints one withheld definition for review: what and why, the
// scanner's findings, and its diff with invisible characters made visible.
func writeChange(w io.Writer, c backends.Change) {
	why := map[string]string{
		backends.WithheldChanged:    "changed since it was approved",
		backends.WithheldNew:        "new, waits for approval (trust: approve)",
		backends.WithheldUnreadable: "withheld while the pin file cannot be used",
	}[c.Reason]
	fmt.Fprintf(w, "%s of %s: %s\n", defName(c.Kind, shown(c.Name)), shown(c.Server), why)
	if c.Pinned != "" {
		fmt.Fprintf(w, "  digest %s, pinned %s\n", backends.ShortDigest(c.Digest), backends.ShortDigest(c.Pinned))
	} else {
		fmt.Fprintf(w, "  digest %s\n", backends.ShortDigest(c.Digest))
	}
	writeFindings(w, c.Findings, "  ")
	for _, line := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", safetext.Visible(line))
	}
	if c.Reason != backends.WithheldUnreadable {
		fmt.Fprintf(w, "  accept: %s\n\n", shown(backends.ApproveCommand(c.Server, c.Name, c.Digest)))
	}
}

// defName is how a definition is named for people: "tool add", or
// "instructions" (a server's, which have no name).
func defName(kind, name string) string {
	if name == "" {
		return kind
	}
	return kind + " " + name
}

func writeFindings(w io.Writer, findings []backends.Finding, indent string) {
	for _, f := range findings {
		fmt.Fprintf(w, "%s! %s in %s: %s\n", indent, f.Rule, shown(f.Where), shown(f.Excerpt))
	}
}

// shown is text a backend wrote — a tool's name, the member a finding is
// in — as a terminal or the dashboard shows it on one line: every
// character a person does not see (safetext.Visible: control characters,
// terminal escapes such as ESC[8m, which would hide what follows,
// zero-width characters, variation selectors, …) and every line break
// written as \u{…}, so that it can neither hide, rewrite nor forge the
// review around it.
func shown(s string) string {
	s = safetext.Visible(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\u{a}`, "\t", `\u{9}`).Replace(s)
}

// approve is `mcp-gateway approve SERVER [NAME] --digest HEX` or
// `approve SERVER --all`: start the server, and pin as approved the
// withheld definition whose digest starts with HEX (NAME's), or with --all
// everything it withholds. Without either it approves nothing: what the
// server lists when the command runs need not be what was reviewed (a
// server can change its definitions again, or show this process others),
// so it shows what is withheld now and the command that accepts each. A
// running gateway sees the pin file change and shows the definitions at
// once.
func (a *app) approve(ctx context.Context) error {
	known := false
	for _, s := range a.cfg.Servers {
		known = known || s.Name == a.inv.server
	}
	if !known {
		return usagef("no server named %q in the configuration", a.inv.server)
	}
	digest := strings.TrimPrefix(strings.ToLower(a.inv.digest), "sha256:")
	switch {
	case a.inv.all && (a.inv.name != "" || a.inv.digest != ""):
		return usagef("--all approves everything %s withholds: give it without NAME and --digest", a.inv.server)
	case a.inv.digest != "" && (len(digest) < minDigest || !isHex(digest)):
		return usagef("--digest takes the digest tools --changes shows, %d hex digits or more", minDigest)
	}
	a.backends.Start(ctx)
	a.waitStarts(ctx)
	if err := a.backends.Trust().Err(); err != nil {
		return fmt.Errorf("nothing approved: %w (repair the file, or move it away to pin again from scratch)", err)
	}
	var approved []backends.Change
	if digest == "" && !a.inv.all {
		if err := a.approveWhich(); err != nil {
			return err
		}
	} else {
		var err error
		approved, err = a.backends.Trust().Approve(a.inv.server, func(c backends.Change) bool {
			return (a.inv.name == "" || c.Name == a.inv.name) && strings.HasPrefix(strings.TrimPrefix(c.Digest, "sha256:"), digest)
		})
		if err != nil {
			return fmt.Errorf("nothing approved: %w", err)
		}
	}
	if err := a.recordApprovals(approved, "mcp-gateway approve", ""); err != nil {
		return err
	}
	w := a.env.stdout
	if len(approved) == 0 {
		what := "server " + a.inv.server
		if a.inv.name != "" {
			what = a.inv.name + " of " + what
		}
		if a.inv.digest != "" {
			what += " with digest " + a.inv.digest + "…"
		}
		fmt.Fprintf(w, "Nothing withheld to approve for %s.\n", what)
		for _, s := range a.backends.Status() {
			if s.State != backends.Ready {
				fmt.Fprintf(w, "(%s is %s: %s)\n", s.Name, s.State, oneLine(s.Error, 200))
				return errReported
			}
		}
		if a.inv.name != "" || a.inv.digest != "" {
			return errReported
		}
		return nil
	}
	for _, c := range approved {
		fmt.Fprintf(w, "approved %s %s of %s (digest %s)\n", c.Kind, shown(c.Name), shown(c.Server), backends.ShortDigest(c.Digest))
	}
	fmt.Fprintf(w, "pin file: %s\n", a.backends.Trust().PinFile())
	return nil
}

package gateway

import (
	"errors"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
)

// didYouMeanError is a tool that is not found, with the names the caller
// most likely meant: -32602 "Tool not found: echo (did you mean
// everything.echo?)", the names also in data.did_you_mean.
type didYouMeanError struct {
	notFoundError
	names []string
}

func (e *didYouMeanError) Error() string {
	return e.notFoundError.Error() + " (did you mean " + orList(e.names) + "?)"
}

// withMeant gives err, when it is name's "Tool not found", the names meant
// instead: those of the naming the caller was shown (Gateway.Call tries
// the others before it answers).
func withMeant(err error, name string, meant []string) error {
	var nf *notFoundError
	var dym *didYouMeanError
	switch {
	case len(meant) == 0:
	case errors.As(err, &dym) && dym.kind == kindTool && dym.name == name:
		dym.names = meant
	case errors.As(err, &nf) && nf.kind == kindTool && nf.name == name:
		return &didYouMeanError{*nf, meant}
	}
	return err
}

// maxSuggestions bounds the names a did-you-mean offers.
const maxSuggestions = 3

// notFound is the error of a name nothing routes: for a tool, with what
// the caller may have meant (suggestTools). The suggestions are drawn from
// what the caller sees only, and whatever name was given, hidden or
// unknown: they tell nothing of what the policy hides.
func (f *front) notFound(kind, name string) error {
	if kind == kindTool {
		if names := f.suggestTools(name); len(names) > 0 {
			return &didYouMeanError{notFoundError{kind, name}, names}
		}
	}
	return &notFoundError{kind, name}
}

// suggestTools returns the tools the caller sees that name most likely
// meant: those whose own name it is (echo for everything.echo: a name
// given without its server's prefix); else those within a few typing
// mistakes of it (toolsearch.EditDistance, case ignored), nearest first — of the
// server whose prefix it has, if it has one. At most maxSuggestions.
func (f *front) suggestTools(name string) []string {
	if name == "" {
		return nil
	}
	// A name with a server's prefix (x.stats) meant a tool of that server:
	// another's one typo away (d.stats) is not offered.
	all := make(map[string]bool)
	for server := range f.g.prefixes() {
		all[server] = true
	}
	server, _, prefixed := f.prefixOwner(name, all)
	var own []string
	type near struct {
		name string
		d    int
	}
	var close []near
	limit := typoLimit(name)
	for front, r := range f.tables().tools {
		if !f.allowed(r) {
			continue
		}
		if r.kind == backendTool && r.own == name {
			own = append(own, front)
			continue
		}
		if prefixed && (r.kind != backendTool || r.server != server) {
			continue
		}
		lower := strings.ToLower(name)
		d := toolsearch.EditDistance(lower, strings.ToLower(front), limit)
		if r.kind == backendTool {
			d = min(d, toolsearch.EditDistance(lower, strings.ToLower(r.own), limit))
		}
		if d <= limit {
			close = append(close, near{front, d})
		}
	}
	if len(own) > 0 {
		slices.Sort(own)
		return own[:min(len(own), maxSuggestions)]
	}
	slices.SortFunc(close, func(a, b near) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, n := range close[:min(len(close), maxSuggestions)] {
		out = append(out, n.name)
	}
	return out
}

// typoLimit is how many edits a name may be from a tool's to be offered
// as what it meant: short names allow fewer, so that a suggestion is a
// likely typo, not any name of the same length.
func typoLimit(name string) int {
	switch n := len([]rune(name)); {
	case n <= 3:
		return 0
	case n <= 5:
		return 1
	case n <= 10:
		return 2
	}
	return 3
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

package policy

import (
	"fmt"
	"strings"
)

// Gateway is the server name of the gateway's own tools (the answer tools)
// in patterns: gateway.answer.
const Gateway = "gateway"

// Pattern names what a rule allows or denies: SERVER, every tool, prompt
// and resource of the servers the glob SERVER matches, or SERVER.NAME,
// their tools and prompts whose own names NAME matches. A server name
// holds no dot, so the first dot ends it; * matches any run of characters.
// Names are the configured server names and the backends' own names,
// whatever a client calls them (prefix, separator, strict names).
type Pattern struct {
	text   string
	server string
	name   string // "" for a whole server
}

// ParsePattern parses a pattern.
func ParsePattern(s string) (Pattern, error) {
	server, name, dotted := strings.Cut(s, ".")
	switch {
	case strings.TrimSpace(s) != s || s == "":
		return Pattern{}, fmt.Errorf("pattern %q: must be SERVER or SERVER.NAME, without spaces around it", s)
	case server == "":
		return Pattern{}, fmt.Errorf("pattern %q: the server part is empty (write * for every server)", s)
	case strings.Trim(server, "*") != "" && !serverChars(strings.ReplaceAll(server, "*", "")):
		return Pattern{}, fmt.Errorf("pattern %q: a server name holds only letters, digits, '_' and '-'", s)
	case dotted && name == "":
		return Pattern{}, fmt.Errorf("pattern %q: the name after the dot is empty (write %s.* for every tool and prompt, or %s for the whole server)", s, server, server)
	}
	return Pattern{text: s, server: server, name: name}, nil
}

func serverChars(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// String is the pattern as written.
func (p Pattern) String() string { return p.text }

// Matches reports whether the pattern names what server serves under its
// own name (a resource: only a whole-server pattern names it).
func (p Pattern) Matches(kind Kind, server, name string) bool { return p.matches(kind, server, name) }

func (p Pattern) matches(kind Kind, server, name string) bool {
	if !glob(p.server, server) {
		return false
	}
	if p.name == "" {
		return true
	}
	return kind != Resource && glob(p.name, name)
}

// glob reports whether s matches pattern, where * matches any run of
// characters (none included) and every other character itself.
func glob(pattern, s string) bool {
	first, rest, star := strings.Cut(pattern, "*")
	if !star {
		return pattern == s
	}
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for {
		part, more, star := strings.Cut(rest, "*")
		if !star {
			// The last part ends s.
			return strings.HasSuffix(s, part)
		}
		if part != "" {
			i := strings.Index(s, part)
			if i < 0 {
				return false
			}
			s = s[i+len(part):]
		}
		rest = more
	}
}

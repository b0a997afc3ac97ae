package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Name limits (docs/design.md). The MCP limit is 128 characters; the strict clients
// accept ^[A-Za-z0-9_-]{1,64}$ only.
const (
	maxName       = 128
	maxStrictName = 64
	hashLen       = 8 // hex digits of the disambiguating suffix
)

// strictClients are substrings of the clientInfo.name of clients that reject
// tool names outside ^[A-Za-z0-9_-]{1,64}$ (a dot breaks their whole tool
// list). gateway.strict_names: auto turns strict names on for them. The
// list is documented in docs/configuration.md.
var strictClients = []string{
	"claude",             // Claude Desktop ("claude-ai"), Claude Code ("claude-code")
	"codex",              // OpenAI Codex CLI ("codex-mcp-client")
	"openai",             // OpenAI's own MCP clients
	"windsurf",           // Windsurf / Codeium
	"codeium",            //
	"copilot",            // GitHub Copilot
	"visual studio code", // VS Code's MCP client, used by Copilot Chat
	"vscode",             //
}

// isStrictClient reports whether a client, by its clientInfo.name, needs
// strict tool names.
func isStrictClient(clientName string) bool {
	n := strings.ToLower(clientName)
	for _, s := range strictClients {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// strictMode resolves gateway.strict_names for a client.
func strictMode(setting, clientName string) bool {
	switch setting {
	case "true":
		return true
	case "false":
		return false
	default: // auto
		return isStrictClient(clientName)
	}
}

// namer turns a backend's own name into the name a client sees:
// prefix + separator + name, sanitised and bounded. It is a pure function of
// its fields and the input, so the same configuration always yields the same
// names.
type namer struct {
	sep    string
	strict bool
	// max is the longest name the client takes, when it is less than
	// its alphabet's limit (maxName, maxStrictName): a client that puts
	// a prefix of its own before each name (clients.go). 0: the limit.
	max int
}

// limit is the longest name n makes.
func (n namer) limit() int {
	switch {
	case n.max > 0:
		return n.max
	case n.strict:
		return maxStrictName
	}
	return maxName
}

// name returns the front name for a backend item (before collision handling).
func (n namer) name(prefix, own string) string {
	full := own
	if prefix != "" {
		full = prefix + n.sep + own
	}
	var b strings.Builder
	b.Grow(len(full))
	if n.strict {
		// The separator becomes "__" unless it is already strict-safe.
		sep := n.sep
		if !isStrictSafe(sep) {
			sep = "__"
		}
		if prefix != "" {
			sanitize(&b, prefix, isStrictRune)
			b.WriteString(sep)
		}
		sanitize(&b, own, isStrictRune)
		return bound(b.String(), full, n.limit())
	}
	sanitize(&b, full, isNameRune)
	return bound(b.String(), full, n.limit())
}

// withSuffix returns name shortened so that name + "_" + hash(key) fits the
// limit; it resolves collisions deterministically.
func (n namer) withSuffix(name, key string) string {
	limit := n.limit()
	suffix := "_" + shortHash(key)
	if len(name)+len(suffix) > limit {
		name = name[:limit-len(suffix)]
	}
	return name + suffix
}

// bound cuts s to limit characters, replacing the tail with a hash of the
// original (unsanitised) name so that two long names stay distinct.
func bound(s, original string, limit int) string {
	if s == "" {
		s = "_"
	}
	if len(s) <= limit {
		return s
	}
	suffix := "_" + shortHash(original)
	return s[:limit-len(suffix)] + suffix
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

func sanitize(b *strings.Builder, s string, ok func(rune) bool) {
	for _, r := range s {
		if ok(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
}

func isStrictSafe(s string) bool {
	for _, r := range s {
		if !isStrictRune(r) {
			return false
		}
	}
	return s != ""
}

// isNameRune: the MCP tool name alphabet [A-Za-z0-9_.-].
func isNameRune(r rune) bool { return isStrictRune(r) || r == '.' }

// isStrictRune: the strict clients' alphabet [A-Za-z0-9_-].
func isStrictRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// nameTable assigns unique front names. Items are added in a fixed order
// (answer tools, then backends in configuration order, then each backend's
// own order), so collisions resolve the same way every time: the first
// keeps the name, later ones get a hash suffix of server and own name.
type nameTable struct {
	namer namer
	taken map[string]bool
	// collisions records "server/own → name" for each renamed item, for
	// the log.
	collisions []collision
}

type collision struct {
	server, own, wanted, got string
}

func newNameTable(n namer, reserved ...string) *nameTable {
	t := &nameTable{namer: n, taken: make(map[string]bool)}
	for _, r := range reserved {
		t.taken[r] = true
	}
	return t
}

// assign returns the unique front name for server's item own, shown under
// prefix.
func (t *nameTable) assign(server, prefix, own string) string {
	want := t.namer.name(prefix, own)
	got := want
	for i := 0; t.taken[got]; i++ {
		key := server + "/" + own
		if i > 0 {
			key += "/" + string(rune('0'+i%10)) + strings.Repeat("+", i/10)
		}
		got = t.namer.withSuffix(want, key)
	}
	if got != want {
		t.collisions = append(t.collisions, collision{server, own, want, got})
	}
	t.taken[got] = true
	return got
}

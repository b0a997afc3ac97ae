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
	return bound(n.unbounded(prefix, own), full, n.limit())
}

// unbounded is name before it is cut to the limit.
func (n namer) unbounded(prefix, own string) string {
	var b strings.Builder
	b.Grow(len(prefix) + len(n.sep) + len(own))
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
		return b.String()
	}
	if prefix != "" {
		sanitize(&b, prefix+n.sep, isNameRune)
	}
	sanitize(&b, own, isNameRune)
	return b.String()
}

// withSuffix returns name shortened so that name + "_" + the first digits
// (hex digits) of hash(key) fits the limit; it resolves collisions
// deterministically.
func (n namer) withSuffix(name, key string, digits int) string {
	limit := n.limit()
	sum := sha256.Sum256([]byte(key))
	suffix := "_" + hex.EncodeToString(sum[:])[:digits]
	if len(name)+len(suffix) > limit {
		name = name[:limit-len(suffix)]
	}
	return name + suffix
}

// exact reports whether prefix and own are in n.name(prefix, own) as they
// are: neither sanitised nor cut.
func (n namer) exact(prefix, own string) bool {
	ok := isNameRune
	if n.strict {
		ok = isStrictRune
	}
	for _, r := range prefix + own {
		if !ok(r) {
			return false
		}
	}
	u := n.unbounded(prefix, own)
	return u != "" && len(u) <= n.limit()
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

// nameTable assigns unique front names. A name depends on the set of
// items named, never on their order: a backend that lists a new tool, in
// whatever place, cannot take the name another tool was shown under, and a
// call by a name reaches the tool that name was shown for or nothing.
//
// An item gets the name it wants (namer.name) when no other item wants it;
// of several that want one name, only the one whose prefix and own name
// are in it as they are (not sanitised nor cut: "a_b", not "a+b") gets it,
// and when none or several are (two servers with prefix "" and one tool
// name; "a"+"b__c" and "a__b"+"c" with strict names) none does. The others
// get the name with a hash of their server and own name; a plain name that
// is such a name of another item is not given (a tool named for another's
// hash cannot take it either); hashes that collide are made longer, and an
// item whose longer name collides too gets no name (it is logged).
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

// nameItem is one backend item to name: server's item own, shown under
// prefix.
type nameItem struct {
	server, prefix, own string
}

func newNameTable(n namer, reserved ...string) *nameTable {
	t := &nameTable{namer: n, taken: make(map[string]bool)}
	for _, r := range reserved {
		t.taken[r] = true
	}
	return t
}

// longHashLen is the hex digits of a disambiguating suffix that the short
// one's collision made longer: not a length anyone can find a collision of.
const longHashLen = 16

// assignAll returns the unique front name of each item, in items' order;
// "" for an item that gets none.
func (t *nameTable) assignAll(items []nameItem) []string {
	out := make([]string, len(items))
	want := make([]string, len(items))
	hashed := make(map[string]int, len(items)) // each item's name with the short hash → how many items have it
	byWant := make(map[string][]int, len(items))
	suspect := false // a name wanted looks like a hashed one
	for i, it := range items {
		want[i] = t.namer.name(it.prefix, it.own)
		byWant[want[i]] = append(byWant[want[i]], i)
		suspect = suspect || looksHashed(want[i])
	}
	hash := func(i int) string { return t.namer.withSuffix(want[i], items[i].key(), hashLen) }
	if suspect {
		// Only then can a name wanted be another's hashed name: the
		// hashes of every item, which most tables never need.
		for i := range items {
			hashed[hash(i)]++
		}
	}
	var rest []int
	for w, group := range byWant {
		keep := -1
		if !t.taken[w] && hashed[w] == 0 {
			for _, i := range group {
				if len(group) == 1 || t.namer.exact(items[i].prefix, items[i].own) {
					if keep >= 0 {
						keep = -1 // several have it as it is: none keeps it
						break
					}
					keep = i
				}
			}
		}
		for _, i := range group {
			if i == keep {
				out[i] = w
			} else {
				rest = append(rest, i)
			}
		}
	}
	if !suspect {
		for _, i := range rest {
			hashed[hash(i)]++
		}
	}
	for _, i := range rest {
		// The short hash, unless it collides with another's or with a
		// name wanted or reserved; else the longer one.
		if name := hash(i); hashed[name] == 1 && !t.taken[name] && byWant[name] == nil {
			out[i] = name
		} else if name := t.namer.withSuffix(want[i], items[i].key(), longHashLen); !t.taken[name] && byWant[name] == nil {
			out[i] = name
		}
	}
	// Longer names are checked against each other last: a collision of
	// 64-bit hashes leaves both unnamed.
	count := make(map[string]int, len(out))
	for _, name := range out {
		count[name]++
	}
	for i, name := range out {
		if name != "" && count[name] > 1 {
			out[i] = ""
		}
	}
	for i, name := range out {
		if name != "" {
			t.taken[name] = true
		}
		if name != want[i] {
			t.collisions = append(t.collisions, collision{items[i].server, items[i].own, want[i], name})
		}
	}
	return out
}

func (it nameItem) key() string { return it.server + "/" + it.own }

// looksHashed reports whether name ends as a hashed name does: "_" and
// hashLen lower-case hex digits.
func looksHashed(name string) bool {
	if len(name) <= hashLen || name[len(name)-hashLen-1] != '_' {
		return false
	}
	for _, c := range name[len(name)-hashLen:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

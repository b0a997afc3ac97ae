package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxSteps bounds the node visits of one file beyond its own nodes, so that
// aliases and merge keys cannot make a small file expensive to read. A plain
// file visits each of its nodes once and never comes near it, however large.
const maxSteps = 200000

// yamlLine finds the line in a yaml.v3 error message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// decodeFile parses data as YAML (JSON is a subset) and applies it to l.cfg.
func (l *loader) decodeFile(data []byte) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return // an empty file, or only comments
		}
		l.parseError(err, data)
		return
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		l.errLine(next.Line, "", "a configuration file holds one YAML document; found another")
		return
	} else if !errors.Is(err, io.EOF) {
		l.parseError(err, nil)
		return
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	l.stepLimit = maxSteps + countNodes(&doc)
	l.top(doc.Content[0])
}

// countNodes counts the nodes of a document as written, without following
// aliases.
func countNodes(n *yaml.Node) int {
	count := 1
	for _, c := range n.Content {
		count += countNodes(c)
	}
	return count
}

// parseError turns a yaml.v3 syntax error into an *Error with its line:
// where data (the first document, when not nil) goes wrong (errorLine).
func (l *loader) parseError(err error, data []byte) {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
		if data != nil {
			line = errorLine(data, msg, line)
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	l.errs = append(l.errs, &Error{File: l.file, Line: line, Msg: "invalid YAML: " + msg})
}

// errorLine is the line where data goes wrong with yaml.v3's message msg.
// For an error of the structure (an indentation that fits no level, a
// missing "-") yaml.v3 names the line where the enclosing list or mapping
// began, not the line that broke it; so the line is found as the shortest
// run of data's first lines, from reported on, that fails with the same
// message (a binary search: O(log n) parses, only for a file that fails).
// An unclosed bracket is found at its own line, where the lines up to it
// already fail. reported is kept when the search finds nothing.
func errorLine(data []byte, msg string, reported int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		return err != nil && strings.HasSuffix(err.Error(), ": "+msg)
	}
	lo, hi := max(reported, 1), len(lines)
	if lo > hi || !fails(hi) {
		return reported
	}
	for lo < hi {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// entry is one key of a mapping, after aliases and merge keys.
type entry struct {
	key  string
	line int // the key's line
	val  *yaml.Node
}

// resolve follows aliases. It returns nil when the step budget is spent.
func (l *loader) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	l.steps++
	if l.steps > l.stepLimit {
		if !l.tooDeep {
			l.tooDeep = true
			l.errLine(0, "", "the file is too complex (too many aliases or merge keys)")
		}
		return nil
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// isNull reports whether n is an explicit or implicit null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// kindName names the YAML kind of n for type errors.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("the string %q", truncate(n.Value, 40))
	}
	return "something else"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mapping returns the entries of the mapping n at key, with merge keys
// (<<) applied and duplicate keys reported. A null n is an empty mapping. It
// reports an error and returns ok == false when n is not a mapping.
func (l *loader) mapping(n *yaml.Node, key string) (entries []entry, ok bool) {
	n = l.resolve(n)
	if n == nil {
		return nil, false
	}
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		l.errLine(n.Line, key, "must be a mapping, not %s", kindName(n))
		return nil, false
	}
	seen := map[string]bool{}
	var merged []entry // from merge keys: one mapping, or a list where earlier ones win
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := l.resolve(n.Content[i]), n.Content[i+1]
		switch {
		case k == nil:
			return nil, false
		case k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null":
			l.errLine(k.Line, key, "keys must be strings, not %s", kindName(k))
		case k.ShortTag() == "!!merge":
			sources := []*yaml.Node{l.resolve(v)}
			if sources[0] != nil && sources[0].Kind == yaml.SequenceNode {
				sources = sources[0].Content
			}
			for _, s := range sources {
				if s = l.resolve(s); s != nil && s.Kind != yaml.MappingNode {
					l.errLine(s.Line, join(key, "<<"), "a merge key takes a mapping or a list of mappings")
				} else if s != nil {
					es, _ := l.mapping(s, key)
					merged = append(merged, es...)
				}
			}
		case seen[k.Value]:
			l.errLine(k.Line, join(key, k.Value), "duplicate key")
		default:
			seen[k.Value] = true
			entries = append(entries, entry{key: k.Value, line: k.Line, val: v})
		}
	}
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			entries = append(entries, e)
		}
	}
	return entries, true
}

// join appends a mapping key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknown reports an unknown key with a suggestion among known.
func (l *loader) unknown(e entry, path string, known []string) {
	msg := "unknown key"
	if s := Suggest(e.key, known); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	l.errLine(e.line, join(path, e.key), "%s", msg)
}

// Suggest returns the known word closest to key, or "": the same but for
// case, "_" and "-"; a prefix either way; else at most two edits away. The
// messages about unknown keys and the command line's unknown commands and
// flags use it.
func Suggest(key string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	for _, k := range known {
		if norm(k) == norm(key) {
			return k
		}
	}
	if len(key) >= 4 {
		for _, k := range known {
			if strings.HasPrefix(k, key) || strings.HasPrefix(key, k) {
				return k
			}
		}
	}
	best, bestD := "", 3
	if len(key) <= 4 {
		bestD = 2
	}
	for _, k := range known {
		if d := levenshtein(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// levenshtein is the edit distance between a and b, in bytes.
func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt32
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How a member name is matched, everywhere in the gateway: exactly, byte
// for byte once unescaped. Decoders in the wild do not all agree: Go's
// encoding/json matches a struct field without case (Unicode simple
// folding, bytes.EqualFold) and keeps the last of repeated members, others
// match exactly and keep the first or the last. A message, or a backend's
// definition, in which two of them could read a member differently is
// refused rather than passed on: whatever checks it (policy, scopes, pins,
// the scanner) would then see one thing and whoever acts on it another.
// Ambiguous is that one rule (docs/design.md, "One reading of a member").

// Known says which members are read in an object and in what it holds.
type Known struct {
	// Names are the members read here: one given only in another case
	// (with none of the name itself) is ambiguous, since one decoder
	// reads it as the member and another does not.
	Names []string
	// Members are what is read inside some of them.
	Members map[string]*Known
	// Elements is what is read inside each element of an array.
	Elements *Known
	// Shallow: only Members are looked into here; other values may hold
	// objects with any names (a response's result, say). Below a known
	// object, an unknown one is looked into as its parent is.
	Shallow bool
}

// Ambiguity is a member that two decoders could read differently.
type Ambiguity struct {
	Path  string // the object it is in: "" for the top, "params._meta", "arguments[2]"
	Name  string // the member, as written
	Other string // the member it clashes with: Name itself when repeated, or the known name
}

// Error names the member; names and the path are cut to a length a log
// line and an error message can carry (they are the sender's, of any size).
func (a *Ambiguity) Error() string {
	at := strconv.Quote(shorten(a.Name))
	if a.Path != "" {
		at += " in " + shorten(a.Path)
	}
	if a.Name == a.Other {
		return "member " + at + " is given more than once"
	}
	return fmt.Sprintf("member %s differs from %q only in case; member names are matched exactly", at, shorten(a.Other))
}

// shorten cuts s to at most 80 bytes, at a rune's start, marking the cut.
func shorten(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	i := most
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Ambiguous returns the first ambiguity in v, a valid JSON value, or nil:
// two members of one object, at any depth (but see Known.Shallow), whose
// names are equal as encoding/json compares them (the same name twice, or
// the same but for case), or a member of an object known describes whose
// name is one of the known names only when case is ignored.
func Ambiguous(v json.RawMessage, known *Known) *Ambiguity {
	b := trimSpace(v)
	if len(b) == 0 {
		return nil
	}
	_, found := ambiguousIn(b, 0, known, true)
	return found
}

// ambiguousIn checks the value at b[i] and returns the index after it; deep
// says whether objects outside known are checked too. It reads each byte
// once: the value is walked as it is checked, and what is not checked is
// skipped whole (a client's message of nested arrays costs what its length
// does, not its length times its depth).
func ambiguousIn(b []byte, i int, known *Known, deep bool) (int, *Ambiguity) {
	if i >= len(b) {
		return i, nil // not valid JSON: not this check's to refuse
	}
	if known != nil {
		deep = !known.Shallow
	}
	switch b[i] {
	case '[':
		var elems *Known
		if known != nil {
			elems = known.Elements
		}
		if elems == nil && !deep {
			return skipValue(b, i), nil
		}
		return ambiguousArray(b, i, elems, deep)
	case '{':
		return ambiguousObject(b, i, known, deep)
	}
	return skipValue(b, i), nil
}

func ambiguousArray(b []byte, i int, elems *Known, deep bool) (int, *Ambiguity) {
	i = skipWS(b, i+1) // past '['
	for n := 0; i < len(b) && b[i] != ']'; n++ {
		var found *Ambiguity
		if i, found = ambiguousIn(b, i, elems, deep); found != nil {
			found.Path = join("["+strconv.Itoa(n)+"]", found.Path)
			return i, found
		}
		if i = skipWS(b, i); i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return skipWS(b, i) + 1, nil // past ']'
}

func ambiguousObject(b []byte, i int, known *Known, deep bool) (int, *Ambiguity) {
	// Most objects are small: each name is compared with the ones before
	// it (bytes.EqualFold is what encoding/json's matching amounts to);
	// past that, by their folded form.
	const small = 16
	var (
		names [small][]byte
		n     int
		folds map[string][]byte
	)
	i = skipWS(b, i+1) // past '{'
	for i < len(b) && b[i] == '"' {
		end := skipString(b, i)
		if end-1 <= i {
			return len(b), nil // an unterminated name: not valid JSON
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if err := json.Unmarshal(b[i:end], &s); err != nil {
				return len(b), nil // not valid JSON: not this check's to refuse
			}
			key = []byte(s)
		}
		if found := clash(key, names[:min(n, small)], n >= small, &folds, known); found != nil {
			return end, found
		}
		if n < small {
			names[n] = key
		}
		n++
		i = skipWS(b, skipWS(b, end)+1) // past ':'
		var inner *Known
		if known != nil {
			inner = known.Members[string(key)]
		}
		if inner == nil && !deep {
			i = skipValue(b, i)
		} else {
			var found *Ambiguity
			if i, found = ambiguousIn(b, i, inner, deep); found != nil {
				found.Path = join(string(key), found.Path)
				return i, found
			}
		}
		if i = skipWS(b, i); i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return skipWS(b, i) + 1, nil // past '}'
}

// clash returns the ambiguity an object's member key makes with the
// members before it — names, all of them while they are few; past that
// (many), their folded forms in folds, which clash keeps — or with the
// names known reads.
func clash(key []byte, names [][]byte, many bool, folds *map[string][]byte, known *Known) *Ambiguity {
	if !many {
		for _, prev := range names {
			if bytes.EqualFold(prev, key) {
				return &Ambiguity{Name: string(key), Other: string(prev)}
			}
		}
	} else {
		if *folds == nil {
			*folds = make(map[string][]byte, 2*len(names))
			for _, prev := range names {
				(*folds)[fold(prev)] = prev
			}
		}
		f := fold(key)
		if prev, ok := (*folds)[f]; ok {
			return &Ambiguity{Name: string(key), Other: string(prev)}
		}
		(*folds)[f] = key
	}
	if known != nil && !isKnown(known.Names, key) {
		for _, k := range known.Names {
			if strings.EqualFold(string(key), k) {
				return &Ambiguity{Name: string(key), Other: k}
			}
		}
	}
	return nil
}

// isKnown reports whether key is one of names. It compares without
// converting key to a string (slices.Contains(names, string(key)) did, an
// allocation for each name longer than 32 bytes: the _meta members of
// every request of 2026-07-28).
func isKnown(names []string, key []byte) bool {
	for _, k := range names {
		if k == string(key) {
			return true
		}
	}
	return false
}

// fold is a name in a form that two names share exactly when
// bytes.EqualFold reports them equal: each rune as the smallest of its
// case-folding orbit.
func fold(name []byte) string {
	var sb strings.Builder
	sb.Grow(len(name))
	for _, r := range string(name) {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		sb.WriteRune(min)
	}
	return sb.String()
}

func join(a, b string) string {
	switch {
	case b == "":
		return a
	case b[0] == '[':
		return a + b
	}
	return a + "." + b
}

package safetext

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Secret shapes: the one table of what a secret looks like when nothing
// around it says so — in a tool's result (gateway.redact: results), a log
// line, an audit record, and in what Mask shows (with its own mask). Each rule has triggers (fixed strings found with
// bytes.Index, which is fast enough to run over every result) and a
// matcher that, at a trigger, says what to mask. MaskShapes works on JSON
// text as well as plain text: a mask never takes a quote or a backslash
// escape apart, so a JSON result stays JSON. docs/trust.md lists the
// rules.

// shapeRule is one shape of secret.
type shapeRule struct {
	kind     string   // what the mask says: [redacted:kind]
	triggers []string // fixed strings that start (or are in) every match
	// match returns the span [start, end) to mask around the trigger found
	// at i in b (its length n), or ok false.
	match func(b []byte, i, n int) (start, end int, ok bool)
}

var shapeRules = []shapeRule{
	{"private-key", []string{"-----BEGIN "}, matchPEM},
	{"aws-access-key", []string{"AKIA", "ASIA"}, fixedRun(16, isUpperDigit)},
	{"aws-secret-key", []string{"ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey"}, afterName(40, 40, isBase64)},
	{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, prefixRun(36, isTokenChar)},
	{"github-token", []string{"github_pat_"}, prefixRun(22, isTokenChar)},
	{"gitlab-token", []string{"glpat-"}, prefixRun(20, isTokenChar)},
	{"slack-token", []string{"xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-"}, prefixRun(10, isTokenChar)},
	{"google-api-key", []string{"AIza"}, prefixRun(35, isTokenChar)},
	{"api-key", []string{"sk-"}, matchAPIKey}, // OpenAI, Anthropic (sk-ant-…), DeepSeek, …
	{"stripe-key", []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, prefixRun(16, isTokenChar)},
	{"npm-token", []string{"npm_"}, prefixRun(36, isTokenChar)},
	{"huggingface-token", []string{"hf_"}, prefixRun(30, isTokenChar)},
	{"jwt", []string{"eyJ"}, matchJWT},
	{"authorization", []string{"Bearer ", "BEARER "}, credential(16, bearerLike)},
	{"authorization", []string{"Basic ", "BASIC "}, credential(8, basicLike)},
	// "authorization: bearer …" in any case is this rule's.
	{"authorization", []string{"uthorization", "UTHORIZATION"}, afterName(8, 4096, isCredChar)},
}

// trigger is one trigger of a rule, found by its anchor: its rarest byte
// (by anchorRank), at off in it. Every byte of the input is looked at by
// bytes.IndexByte, once per distinct anchor, which runs at memory speed
// where the anchor is rare; only at an anchor is a trigger compared.
type trigger struct {
	text string
	off  int
	rule *shapeRule
}

// anchorRank lists bytes from the most to the least common in text and
// JSON; bytes not listed are rarer still.
const anchorRank = " etaoinsrhldcumfpgwybv\",:{}[]0123456789.kxjqz/-_=ETAOINSRHLDCUMFPGWYBVKXJQZ"

var (
	anchors  []byte         // the distinct anchor bytes
	byAnchor [256][]trigger // the triggers of each anchor
	// near[a] says which bytes may stand next to anchor a in a trigger:
	// before it (bit 0: b[at-1]) when the trigger has bytes before the
	// anchor, else after it (bit 1: b[at+1]). Most anchors in a text are
	// rejected by this one look.
	near [256][256]uint8
)

func init() {
	for i := range shapeRules {
		r := &shapeRules[i]
		for _, t := range r.triggers {
			off := 0
			for k := range len(t) {
				if strings.IndexByte(anchorRank, t[k]) > strings.IndexByte(anchorRank, t[off]) || strings.IndexByte(anchorRank, t[k]) < 0 {
					off = k
					if strings.IndexByte(anchorRank, t[k]) < 0 {
						break
					}
				}
			}
			a := t[off]
			if byAnchor[a] == nil {
				anchors = append(anchors, a)
			}
			byAnchor[a] = append(byAnchor[a], trigger{t, off, r})
			if off > 0 {
				near[a][t[off-1]] |= 1
			} else {
				near[a][t[1]] |= 2
			}
		}
	}
}

// MaskShapes returns b with every secret of a known shape replaced by
// "[redacted:KIND]", and how many it replaced. Without any, it returns b
// itself (no copy).
func MaskShapes(b []byte) ([]byte, int) {
	return replaceShapes(b, func(out []byte, kind string) []byte {
		out = append(out, "[redacted:"...)
		out = append(out, kind...)
		return append(out, ']')
	})
}

// replaceShapes returns b with every secret of a known shape replaced by
// what with writes for its kind, and how many it replaced. Without any,
// it returns b itself (no copy).
func replaceShapes(b []byte, with func(out []byte, kind string) []byte) ([]byte, int) {
	// The rules read the text as its reader does: a JSON escape that
	// stands for a character of a secret (\/ from PHP's encoder, \u003d
	// from Gson's, \u0067hp_…) is read as that character, and a mask
	// takes the whole escape.
	view, esc := decodeWordEscapes(b)
	spans := findShapes(view)
	if len(spans) == 0 {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	at, n := 0, 0
	for _, sp := range spans {
		start, end := esc.raw(sp.start), esc.raw(sp.end)
		if start < at { // inside one masked already
			at = max(at, end)
			continue
		}
		out = append(out, b[at:start]...)
		out = with(out, sp.kind)
		at, n = end, n+1
	}
	return append(out, b[at:]...), n
}

// shapeSpan is a secret found by findShapes: b[start:end], of kind.
type shapeSpan struct {
	start, end int
	kind       string
}

// findShapes returns the secrets of a known shape in b, by start.
func findShapes(b []byte) []shapeSpan {
	var spans []shapeSpan
	for _, a := range anchors {
		group := byAnchor[a]
		for off := 0; off < len(b); {
			j := bytes.IndexByte(b[off:], a)
			if j < 0 {
				break
			}
			at := off + j
			off = at + 1
			nb := &near[a]
			if (at == 0 || nb[b[at-1]]&1 == 0) && (at+1 == len(b) || nb[b[at+1]]&2 == 0) {
				continue
			}
			for _, t := range group {
				i := at - t.off
				if i < 0 || i+len(t.text) > len(b) || string(b[i:i+len(t.text)]) != t.text {
					continue
				}
				if s, e, ok := t.rule.match(b, i, len(t.text)); ok {
					spans = append(spans, shapeSpan{s, e, t.rule.kind})
					off = max(off, e)
					break
				}
			}
		}
	}
	slices.SortFunc(spans, func(x, y shapeSpan) int { return x.start - y.start })
	return spans
}

// wordEscapes maps the text decodeWordEscapes returns to the text it was
// decoded from: at[k] is where the k-th decoded escape is in the decoded
// text, extra[k] how many bytes longer the text was before it. Empty when
// nothing was decoded.
type wordEscapes struct{ at, extra []int }

// raw is where offset i of the decoded text was in the text it was
// decoded from; an escape is never taken apart.
func (m wordEscapes) raw(i int) int {
	k, _ := slices.BinarySearch(m.at, i) // the escapes before i
	if k == 0 {
		return i
	}
	return i + m.extra[k-1]
}

// decodeWordEscapes returns b with each JSON escape that stands for a
// character a secret may hold (isCredChar: \/, and \u00XX of a letter,
// a digit, + / = _ - . ~), after any run of backslashes, written as that
// character, and where each was;
// b itself when there is none. The escapes that stand for no such
// character (\n, \", \u003c) stay: boundaryBefore reads them.
func decodeWordEscapes(b []byte) ([]byte, wordEscapes) {
	var m wordEscapes
	var out []byte
	at := 0 // b[:at] is in out
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		if i+1 < len(b) && b[i+1] != '/' && b[i+1] != 'u' && b[i+1] != '\\' {
			i++ // \", \n, …: the common case
			continue
		}
		// A run of backslashes: in a tool's text that is JSON itself,
		// written as a JSON string, \/ is "\/" and so "/" to its reader,
		// as boundaryBefore reads "\\n".
		k := i
		for k < len(b) && b[k] == '\\' {
			k++
		}
		c, size := byte(0), 0
		switch {
		case k == len(b):
		case b[k] == '/':
			c, size = '/', k+1-i
		case b[k] == 'u' && k+5 <= len(b) && b[k+1] == '0' && b[k+2] == '0':
			if v, ok := hexByte(b[k+3], b[k+4]); ok && isCredChar(v) {
				c, size = v, k+5-i
			}
		}
		if size == 0 {
			i = k - 1
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(append(out, b[at:i]...), c)
		m.at = append(m.at, len(out)-1)
		extra := size - 1
		if n := len(m.extra); n > 0 {
			extra += m.extra[n-1]
		}
		m.extra = append(m.extra, extra)
		i += size - 1
		at = i + 1
	}
	if out == nil {
		return b, m
	}
	return append(out, b[at:]...), m
}

// hexByte is the byte two hexadecimal digits write.
func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return c | 0x20 - 'a' + 10, true
	}
	return 0, false
}

// MaskShapesString is MaskShapes for a string.
func MaskShapesString(s string) (string, int) {
	out, n := MaskShapes([]byte(s))
	if n == 0 {
		return s, 0
	}
	return string(out), n
}

func isUpperDigit(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isUpperDigit(c) || c >= 'a' && c <= 'z' }
func isTokenChar(c byte) bool  { return isAlnum(c) || c == '_' || c == '-' }
func isBase64(c byte) bool     { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// isCredChar is a character of a credential as a header value writes it.
func isCredChar(c byte) bool { return isBase64(c) || c == '_' || c == '-' || c == '.' || c == '~' }

// boundaryBefore reports whether no word character precedes b[i] in the
// text as its reader decodes it. In JSON text the character before may be
// written as an escape whose last byte is a letter or a digit although
// what it stands for is no word character: "\nghp_…" is a newline and a
// token, "\u003cghp_…" (Go's "<") too. So an escape ending at b[i-1] is
// read as the character it stands for, whatever precedes its backslash: a
// result's text is often JSON itself, and "\\nghp_…" in the result is
// "\nghp_…" in that text, a newline to whoever reads it as JSON. Text
// that is not JSON loses at most a word that ends in such a pair (a path's
// "\n…") to a mask.
func boundaryBefore(b []byte, i int) bool {
	if i == 0 || !isTokenChar(b[i-1]) {
		return true
	}
	c, ok := escapedBefore(b, i)
	return ok && !isTokenChar(c)
}

// escapedBefore returns the character the JSON escape that ends at b[i-1]
// stands for (0x80 for any beyond ASCII), if one ends there: \b, \f, \n,
// \r, \t or \uXXXX. (\", \/ and \\ end in no word character.)
func escapedBefore(b []byte, i int) (byte, bool) {
	if i >= 2 && b[i-2] == '\\' && strings.IndexByte("bfnrt", b[i-1]) >= 0 {
		return '\n', true // a control character
	}
	if i < 6 || b[i-6] != '\\' || b[i-5] != 'u' {
		return 0, false
	}
	var v int
	for _, c := range b[i-4 : i] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			v = v<<4 | int(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	if v >= 0x80 {
		return 0x80, true
	}
	return byte(v), true
}

// run is the end of the run of chars of class from i.
func run(b []byte, i int, class func(byte) bool) int {
	for i < len(b) && class(b[i]) {
		i++
	}
	return i
}

// prefixRun matches a trigger that begins a token (at a word boundary)
// followed by at least min characters of class: the whole token.
func prefixRun(min int, class func(byte) bool) func([]byte, int, int) (int, int, bool) {
	return func(b []byte, i, n int) (int, int, bool) {
		if !boundaryBefore(b, i) {
			return 0, 0, false
		}
		end := run(b, i+n, class)
		return i, end, end-(i+n) >= min
	}
}

// matchAPIKey matches an API key after its "sk-" (at a word boundary): 6
// or more token characters, and '*' too when "***" is among them (a key
// an API's error shows partly masked, sk-abc***xyz, sk-proj-****…wxyz, of
// which the rest still shows a part). Real keys are far longer; 6 is what
// a configuration's placeholder or a test's key (sk-do-not-echo) has, and
// "sk-" at a word boundary starts little else.
func matchAPIKey(b []byte, i, n int) (int, int, bool) {
	if !boundaryBefore(b, i) {
		return 0, 0, false
	}
	end := run(b, i+n, func(c byte) bool { return isTokenChar(c) || c == '*' })
	if !bytes.Contains(b[i+n:end], []byte("***")) {
		end = run(b, i+n, isTokenChar)
	}
	return i, end, end-(i+n) >= 6
}

// fixedRun matches a trigger followed by exactly n characters of class,
// the whole at word boundaries.
func fixedRun(n int, class func(byte) bool) func([]byte, int, int) (int, int, bool) {
	return func(b []byte, i, tn int) (int, int, bool) {
		end := run(b, i+tn, class)
		return i, end, boundaryBefore(b, i) && end-(i+tn) == n && (end == len(b) || !isAlnum(b[end]))
	}
}

// afterName matches a name (the trigger, the end of one such as
// aws_secret_access_key or Authorization) followed by separators (quotes,
// ':', '=', spaces) and a value of min to max characters of class: the
// value, after a scheme word (Bearer, Basic, token) if there is one.
func afterName(min, max int, class func(byte) bool) func([]byte, int, int) (int, int, bool) {
	return func(b []byte, i, n int) (int, int, bool) {
		j := run(b, i+n, isTokenChar) // the rest of the name: ..._key, ...Key
		k := j
		for k < len(b) && k-j < 8 {
			if b[k] == '\\' && k+1 < len(b) && strings.IndexByte("nrt", b[k+1]) >= 0 {
				k += 2 // JSON's \t, \n or \r: a space
			} else if strings.IndexByte(`\"': =`+"\t", b[k]) >= 0 {
				k++
			} else {
				break
			}
		}
		if k == j || k == len(b) {
			return 0, 0, false
		}
		if w := run(b, k, isAlnum); w < len(b) && b[w] == ' ' && w-k <= 8 && isScheme(string(b[k:w])) {
			k = w + 1
		}
		end := run(b, k, class)
		if l := end - k; l < min || l > max {
			return 0, 0, false
		}
		return k, end, true
	}
}

func isScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "negotiate":
		return true
	}
	return false
}

// credential matches an Authorization scheme (the trigger) followed by a
// credential of at least min characters that looks like one (like): the
// credential.
func credential(min int, like func([]byte) bool) func([]byte, int, int) (int, int, bool) {
	return func(b []byte, i, n int) (int, int, bool) {
		if !boundaryBefore(b, i) {
			return 0, 0, false
		}
		end := run(b, i+n, isCredChar)
		if end-(i+n) < min || !like(b[i+n:end]) {
			return 0, 0, false
		}
		return i + n, end, true
	}
}

// bearerLike: a token has a digit somewhere; words ("Bearer authentication
// scheme") do not.
func bearerLike(v []byte) bool { return bytes.ContainsAny(v, "0123456789") }

// basicLike: Basic credentials are base64 of user:password.
func basicLike(v []byte) bool {
	d, err := base64.StdEncoding.DecodeString(string(v))
	return err == nil && bytes.IndexByte(d, ':') > 0
}

// matchPEM matches a private key block from its BEGIN line to its END
// line, whether its line breaks are real or JSON's \n. A block cut short
// is masked to the end of its JSON string (an unescaped quote) or of b.
func matchPEM(b []byte, i, n int) (int, int, bool) {
	rest := b[i+n:]
	dash := bytes.Index(rest, []byte("-----"))
	if dash < 0 || dash > 40 || !bytes.HasSuffix(bytes.TrimSuffix(rest[:dash], []byte(" BLOCK")), []byte("PRIVATE KEY")) {
		return 0, 0, false
	}
	body := i + n + dash + 5
	if e := bytes.Index(b[body:], []byte("-----END ")); e >= 0 && e < 1<<16 {
		after := body + e + len("-----END ")
		if d := bytes.Index(b[after:], []byte("-----")); d >= 0 && d <= 40 {
			end := after + d + 5
			if q := quoteIn(b[i:end]); q < 0 {
				return i, end, true
			}
		}
	}
	if q := quoteIn(b[body:]); q >= 0 {
		return i, body + q, true
	}
	return i, len(b), true
}

// quoteIn is the index of the first unescaped '"' in b, or -1.
func quoteIn(b []byte) int {
	for k := 0; k < len(b); k++ {
		switch b[k] {
		case '\\':
			k++
		case '"':
			return k
		}
	}
	return -1
}

// matchJWT matches header.payload.signature, the first two base64url JSON
// objects ("eyJ" is `{"` encoded).
func matchJWT(b []byte, i, n int) (int, int, bool) {
	if !boundaryBefore(b, i) {
		return 0, 0, false
	}
	isURL64 := func(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }
	h := run(b, i+n, isURL64)
	if h-i < 10 || h+4 > len(b) || b[h] != '.' || string(b[h+1:h+4]) != "eyJ" {
		return 0, 0, false
	}
	p := run(b, h+4, isURL64)
	if p-h < 10 || p >= len(b) || b[p] != '.' {
		return 0, 0, false
	}
	s := run(b, p+1, isURL64)
	if s-p < 9 {
		return 0, 0, false
	}
	return i, s, true
}

// Invisible reports whether r is a character a person does not see but a
// model reads: zero-width characters and other format characters (bidi
// controls and marks, U+061C among them, Unicode tag characters, which
// spell ASCII invisibly, the soft hyphen), variation selectors (U+FE00–FE0F,
// U+E0100–E01EF: a run of them after one character smuggles bytes), the
// combining grapheme joiner, blank letters (the Hangul fillers U+115F,
// U+1160, U+3164, U+FFA0, the Braille blank U+2800), and control
// characters other than tab, newline and carriage return (terminal escapes
// among them).
func Invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r >= 0x7f && r < 0xa0, r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x180e,
		r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069,
		r == 0x2800, r == 0x3164, r >= 0xfe00 && r <= 0xfe0f, r == 0xfeff, r == 0xffa0,
		r >= 0xe0000 && r <= 0xe007f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return r > 0x7f && unicode.Is(unicode.Cf, r)
}

// IsVariationSelector reports whether r selects a variant of the
// character before it (U+FE00–FE0F, U+E0100–E01EF).
func IsVariationSelector(r rune) bool {
	return r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef
}

// Visible returns s with every character a person does not see but a
// model reads (Invisible: zero-width and format characters, variation
// selectors, blank letters, control characters but tab and newline; a
// carriage return is shown: it would rewrite a reviewer's line) written
// as \u{XXXX}: what a reviewer of a definition must see.
func Visible(s string) string {
	hidden := func(r rune) bool { return r == '\r' || r != '\n' && Invisible(r) }
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, `\u{%x}`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

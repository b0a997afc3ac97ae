// Package safetext makes text from outside the gateway (a backend's
// descriptions and stderr, an upstream API's error message) safe to show on
// a terminal, write to a log or hand to the client: control characters and
// terminal escape sequences removed, secrets replaced. It is a plain
// package so that answer, backends and gateway share it; it is not API.
// See docs/errors.md.
package safetext

import (
	"strings"
	"unicode/utf8"
)

// Strip returns s without terminal control: ANSI/VT escape sequences (CSI,
// OSC such as a window title, and other ESC sequences) are removed whole,
// and every other C0 and C1 control character, DEL and the Unicode
// bidirectional overrides are removed, except tab. With keepNewlines, "\n"
// is kept (multi-line text); otherwise it becomes a space, so that one
// record stays one line (no forged log lines). Invalid UTF-8 becomes U+FFFD.
func Strip(s string, keepNewlines bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d: // ESC, CSI, OSC
			i += escapeLen(s[i:], size)
			continue
		case r == '\t':
			b.WriteByte('\t')
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi overrides
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is valid UTF-8 with no control characters but
// tab (the common case, no copy).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c >= 0x80 {
			if c >= 0x80 {
				return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
					return r < 0x20 && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
				})
			}
			return false
		}
	}
	return true
}

// escapeLen is the length of the escape sequence at the start of s, whose
// introducer is size bytes long: CSI runs to a final byte 0x40-0x7e, OSC
// (and DCS, PM, APC, SOS) to BEL or ST, any other ESC sequence is ESC plus
// intermediates plus one final byte. An unterminated sequence runs to the
// end of s.
func escapeLen(s string, size int) int {
	i := size
	kind := s[0]
	if kind == 0x1b {
		if i >= len(s) {
			return i
		}
		switch s[i] {
		case '[':
			kind = 0x9b
			i++
		case ']', 'P', '^', '_', 'X':
			kind = 0x9d
			i++
		default:
			for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
				i++
			}
			if i < len(s) {
				i++
			}
			return i
		}
	} else {
		kind = s[1] // the C1 form is two bytes in UTF-8: 0xc2 0x9b / 0x9d
	}
	switch kind {
	case 0x9b:
		for i < len(s) {
			c := s[i]
			i++
			if c >= 0x40 && c <= 0x7e {
				return i
			}
		}
	default:
		for i < len(s) {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			i++
		}
	}
	return len(s)
}

// Redact replaces every occurrence of each non-empty secret (of 4
// characters or more: shorter ones are too common as substrings), and
// anything Mask recognises as a secret, with "[redacted]".
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return Mask(s, "[redacted]")
}

package wire

import "encoding/binary"

// Valid reports whether b is exactly one JSON value (RFC 8259), with
// optional whitespace around it: what encoding/json's Valid reports,
// including its limit of 10000 nested arrays and objects and its
// indifference to invalid UTF-8 inside strings (Decode checks UTF-8 on its
// own). It walks b once without allocating (up to 64 levels of nesting),
// several times faster than encoding/json's scanner, which calls a function
// per byte: every message in both directions goes through it.
func Valid(b []byte) bool {
	i := validValue(b, skipWS(b, 0), maxNesting)
	return i >= 0 && skipWS(b, i) == len(b)
}

// validValue checks the JSON value that starts at b[i] and returns the
// index just after it, or -1; its arrays and objects may nest at most depth
// deep.
func validValue(b []byte, i, depth int) int {
	var stackBuf [64]byte
	stack := stackBuf[:0] // the open containers, '{' or '['
	for {
		// A value starts at i.
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) == depth {
				return -1
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']'
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i = validKey(b, i); i < 0 {
					return -1
				}
			}
			continue
		case '"':
			i = validString(b, i)
		case 't':
			i = validLiteral(b, i, "true")
		case 'f':
			i = validLiteral(b, i, "false")
		case 'n':
			i = validLiteral(b, i, "null")
		default:
			i = validNumber(b, i)
		}
		if i < 0 {
			return -1
		}
		// After a value: the end of the outermost one, or a comma and the
		// next one, or the end of containers.
		for {
			if len(stack) == 0 {
				return i
			}
			if i = skipWS(b, i); i >= len(b) {
				return -1
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
			if top == '{' {
				if i = validKey(b, i); i < 0 {
					return -1
				}
			}
			break
		}
	}
}

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// validKey checks a member name and its colon at b[i] and returns the
// index of the value, or -1.
func validKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipWS(b, i+1)
}

// validString checks the string at b[i] == '"' and returns the index after
// it, or -1.
func validString(b []byte, i int) int {
	plain := 0 // plain bytes in a row
	for i++; i < len(b); i++ {
		c := b[i]
		if !plainInString[c] {
			// Past the first few (most strings are short), the plain
			// bytes of a long text go eight at a time.
			if plain++; plain == 16 {
				plain = 0
				for i+9 <= len(b) && !specialIn8(binary.LittleEndian.Uint64(b[i+1:])) {
					i += 8
				}
			}
			continue
		}
		plain = 0
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		}
		// A backslash.
		i++
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				return -1
			}
			i += 4
		default:
			return -1
		}
	}
	return -1
}

// specialIn8 reports whether one of the eight bytes of x may be a quote, a
// backslash or below 0x20 (it may say so of a plain byte that follows one
// that is; never the other way round).
func specialIn8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zeroIn := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return zeroIn(x^(ones*'"'))|zeroIn(x^(ones*'\\'))|((x-ones*0x20)&^x&highs) != 0
}

// plainInString marks the bytes that end a run of plain string content:
// the quote, the backslash and the control characters.
var plainInString = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validNumber checks the number at b[i] and returns the index after it, or
// -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b) || !isDigit(b[i]):
		return -1
	case b[i] == '0':
		i++
	default:
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

// validLiteral checks that lit is at b[i] and returns the index after it,
// or -1.
func validLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

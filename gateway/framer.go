package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// stdioFraming says how an input message was delimited, and so how replies
// are written.
type stdioFraming uint32

const (
	stdioFramingNone   stdioFraming = iota // nothing received yet
	stdioFramingLine                       // one line of JSON ending in "\n"
	stdioFramingHeader                     // "Content-Length: N\r\n\r\n" + N bytes
)

func (f stdioFraming) String() string {
	switch f {
	case stdioFramingLine:
		return "line"
	case stdioFramingHeader:
		return "framed"
	}
	return "none"
}

// stdioFrame is one unit of input: either the bytes of one message (not yet
// checked to be JSON) or a piece of input that could not be delimited.
type stdioFrame struct {
	framing stdioFraming
	body    []byte // the message; nil when bad is set
	size    int    // input bytes this frame covered, terminators and headers included
	skipped int    // input bytes before this frame that belonged to no message (blank lines, resynchronisation)
	bad     string // non-empty: why the input was rejected (answered with -32700)
}

// stdioFramerBufSize is the framer's read buffer. Lines and bodies longer
// than this are assembled in memory only up to the message limit.
const stdioFramerBufSize = 64 << 10

var (
	stdioBOM           = []byte{0xEF, 0xBB, 0xBF}
	stdioContentLength = []byte("content-length:")
)

// stdioFramer splits a byte stream into messages. Each message is either a
// Content-Length framed body or one line of JSON; both kinds may be mixed
// and split across reads in any way. A UTF-8 BOM at the start of the stream,
// of a line or of a framed body is skipped.
//
// A framer never holds more than max bytes of one message (plus its read
// buffer): an over-long line is discarded up to its newline, and a body whose
// Content-Length exceeds max is discarded by streaming it, each reported as a
// bad frame.
//
// Header blocks. A line that starts with a header name and a colon (and not
// with a JSON value) opens a header block, which ends at an empty line
// (CRLF or LF). Header names are case-insensitive and headers other than
// Content-Length are ignored. A block without a usable Content-Length
// (missing, not a plain non-negative decimal, two different values, or a
// header line over the limit) is reported as one bad frame, and the framer
// resynchronises: the bytes after the block (the presumed body, whose length
// is unknown) are discarded, with no further error, up to the first of
//   - a "Content-Length:" header name, in any case, at the start of the
//     presumed body, at the start of a line, or after a '}' or ']' and
//     optional blanks on the same line (a framed body has no trailing
//     newline, so the next header may follow it directly), or
//   - a line, other than the first, that begins with '{' or '['.
//
// So a bad header block followed directly by a line message loses that
// message, taken for the bad frame's body. A header block interrupted by a
// line that is neither a header nor empty is reported as one bad frame, and
// that line is then read as the start of the next message. A valid
// Content-Length over the limit is not a resynchronisation: exactly that
// many bytes are discarded.
//
// A stdioFramer is not safe for concurrent use.
type stdioFramer struct {
	br  *bufio.Reader
	max int

	started bool   // the BOM check is done
	resync  bool   // the last frame was an unusable header block
	pending []byte // a line to read again (it interrupted a header block)
	err     error  // sticky input error, returned once pending input is used up
}

func newStdioFramer(r io.Reader, max, bufSize int) *stdioFramer {
	if bufSize <= 0 {
		bufSize = stdioFramerBufSize
	}
	return &stdioFramer{br: bufio.NewReaderSize(r, bufSize), max: max}
}

// next returns the next frame. Blank lines are skipped. The error is non-nil
// only when the input is exhausted: io.EOF at its end, or the reader's error.
// A frame's body is owned by the caller.
func (f *stdioFramer) next() (stdioFrame, error) {
	if !f.started {
		f.started = true
		f.skipBOM()
	}
	skipped := 0
	if f.resync {
		f.resync = false
		skipped = f.skipToMessage()
	}
	for {
		line, n, tooLong, err := f.readLine()
		if err != nil {
			return stdioFrame{}, err
		}
		if tooLong {
			return stdioFrame{framing: stdioFramingLine, size: n, skipped: skipped,
				bad: fmt.Sprintf("line exceeds the %d-byte limit", f.max)}, nil
		}
		// A BOM may also open a later message (a client that re-opens its
		// writer per message); it is never part of the JSON.
		content := stdioTrimSpace(bytes.TrimPrefix(stdioTrimSpace(line), stdioBOM))
		if len(content) == 0 {
			skipped += n
			continue
		}
		if stdioIsHeader(content) {
			fr := f.readHeaderFramed(content, n)
			fr.skipped = skipped
			return fr, nil
		}
		return stdioFrame{framing: stdioFramingLine, body: bytes.Clone(content), size: n, skipped: skipped}, nil
	}
}

// readHeaderFramed reads the rest of a header block whose first line is
// first (n bytes of input), then the body.
func (f *stdioFramer) readHeaderFramed(first []byte, n int) stdioFrame {
	fr := stdioFrame{framing: stdioFramingHeader, size: n}
	var (
		length   int64
		seen     bool
		badValue string
	)
	header := func(h []byte) {
		name, value, _ := bytes.Cut(h, []byte(":"))
		if !bytes.EqualFold(name, stdioContentLength[:len(stdioContentLength)-1]) {
			return
		}
		v, ok := stdioParseLength(stdioTrimSpace(value))
		switch {
		case !ok:
			badValue = "invalid Content-Length"
		case seen && v != length:
			badValue = "conflicting Content-Length headers"
		default:
			length = v
		}
		seen = true
	}
	header(first)
	for {
		line, m, tooLong, err := f.readLine()
		if err != nil {
			fr.bad = "input ended inside a header block"
			return fr
		}
		fr.size += m
		if tooLong {
			badValue = "header line too long"
			continue
		}
		content := stdioTrimSpace(line)
		if len(content) == 0 {
			break
		}
		if !stdioIsHeader(content) {
			// Not a header: this block is broken, and the line may well be
			// the next message. Read it again.
			f.pending = bytes.Clone(line)
			fr.size -= m
			fr.bad = "header block not ended by an empty line"
			return fr
		}
		header(content)
	}
	switch {
	case badValue != "":
		fr.bad = badValue
		f.resync = true
	case !seen:
		fr.bad = "missing Content-Length"
		f.resync = true
	case length > int64(f.max):
		fr.bad = fmt.Sprintf("Content-Length %d exceeds the %d-byte limit", length, f.max)
		d, err := stdioDiscard(f.br, length)
		fr.size += int(min(d, int64(^uint(0)>>1)))
		if err != nil {
			f.setErr(err)
		}
	default:
		body := make([]byte, length)
		k, err := io.ReadFull(f.br, body)
		fr.size += k
		if err != nil {
			f.setErr(err)
			fr.bad = "input ended inside a body"
			return fr
		}
		fr.body = bytes.TrimPrefix(body, stdioBOM)
	}
	return fr
}

// readLine reads through the next '\n' (or to the end of input) and returns
// the line with its terminator, which is valid only until the next read, and
// n, the number of bytes consumed. If the line, less its terminator, is longer
// than f.max, it is consumed without being kept and tooLong is set. err is
// non-nil only when no byte was read.
func (f *stdioFramer) readLine() (line []byte, n int, tooLong bool, err error) {
	if f.pending != nil {
		line, f.pending = f.pending, nil
		return line, len(line), false, nil
	}
	if f.err != nil {
		return nil, 0, false, f.err
	}
	first := true
	for {
		chunk, e := f.br.ReadSlice('\n')
		n += len(chunk)
		if !tooLong {
			switch {
			case len(line)+len(chunk) > f.max+2: // longer than max even without "\r\n"
				tooLong, line = true, nil
			case first && e != bufio.ErrBufferFull:
				line = chunk // the common case: no copy
			default:
				line = append(line, chunk...)
			}
		}
		first = false
		if e == bufio.ErrBufferFull {
			continue
		}
		if e != nil {
			f.setErr(e)
			if n == 0 {
				return nil, 0, false, f.err
			}
		}
		break
	}
	if !tooLong && len(stdioTrimEOL(line)) > f.max {
		tooLong, line = true, nil
	}
	return line, n, tooLong, nil
}

// skipToMessage discards input up to the next plausible message start after
// an unusable header block (see stdioFramer) and returns the number of bytes
// discarded.
func (f *stdioFramer) skipToMessage() int {
	skipped := 0
	lineStart := false // the presumed body's first line is never a message start
	boundary := true   // a Content-Length header may start here
	for f.err == nil {
		p, err := f.br.Peek(1)
		if err != nil {
			f.setErr(err)
			break
		}
		c := p[0]
		if lineStart && (c == '{' || c == '[') {
			break
		}
		if boundary && c|0x20 == 'c' {
			p, _ = f.br.Peek(len(stdioContentLength))
			if bytes.EqualFold(p, stdioContentLength) {
				break
			}
		}
		f.br.Discard(1)
		skipped++
		switch c {
		case '\n':
			lineStart, boundary = true, true
		case ' ', '\t', '\r':
			lineStart = false
		case '}', ']':
			lineStart, boundary = false, true
		default:
			lineStart, boundary = false, false
		}
	}
	return skipped
}

func (f *stdioFramer) skipBOM() {
	p, err := f.br.Peek(1)
	if err != nil || p[0] != stdioBOM[0] {
		if err != nil && err != bufio.ErrBufferFull {
			f.setErr(err)
		}
		return
	}
	if p, _ = f.br.Peek(len(stdioBOM)); bytes.Equal(p, stdioBOM) {
		f.br.Discard(len(stdioBOM))
	}
}

// setErr records the first input error; a truncated read counts as the end
// of input.
func (f *stdioFramer) setErr(err error) {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	if f.err == nil {
		f.err = err
	}
}

// stdioDiscard discards n bytes of br without holding them.
func stdioDiscard(br *bufio.Reader, n int64) (int64, error) {
	var done int64
	for done < n {
		step := int(min(n-done, 1<<30))
		k, err := br.Discard(step)
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// stdioParseLength parses a Content-Length value: decimal digits only.
func stdioParseLength(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// stdioIsHeader reports whether line (trimmed, non-empty) is a header line:
// a token followed by ':', and not the start of a JSON value.
func stdioIsHeader(line []byte) bool {
	switch c := line[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9'):
		return false
	}
	for i, c := range line {
		if c == ':' {
			return i > 0
		}
		if !stdioIsTokenChar(c) {
			return false
		}
	}
	return false
}

// stdioIsTokenChar reports whether c may appear in an HTTP header name.
func stdioIsTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

func stdioIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stdioTrimSpace trims JSON whitespace from both ends of b.
func stdioTrimSpace(b []byte) []byte {
	for len(b) > 0 && stdioIsSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && stdioIsSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// stdioTrimEOL removes one trailing "\n" or "\r\n".
func stdioTrimEOL(b []byte) []byte {
	b, _ = bytes.CutSuffix(b, []byte("\n"))
	b, _ = bytes.CutSuffix(b, []byte("\r"))
	return b
}

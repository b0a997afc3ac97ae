package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Framing says how an input message was delimited, and so how replies
// are written.
type Framing uint32

const (
	FramingNone   Framing = iota // nothing received yet
	FramingLine                  // one line of JSON ending in "\n"
	FramingHeader                // "Content-Length: N\r\n\r\n" + N bytes
)

func (f Framing) String() string {
	switch f {
	case FramingLine:
		return "line"
	case FramingHeader:
		return "framed"
	}
	return "none"
}

// Frame is one unit of input: either the bytes of one message (not yet
// checked to be JSON) or a piece of input that could not be delimited.
type Frame struct {
	Framing Framing
	Body    []byte // the message; nil when bad is set
	Size    int    // input bytes this frame covered, terminators and headers included
	Skipped int    // input bytes before this frame that belonged to no message (blank lines, resynchronisation)
	Bad     string // non-empty: why the input was rejected (answered with -32700)
}

// framerBufSize is the framer's read buffer. Lines and bodies longer
// than this are assembled in memory only up to the message limit.
const framerBufSize = 64 << 10

var (
	bom           = []byte{0xEF, 0xBB, 0xBF}
	contentLength = []byte("content-length:")
)

// Framer splits a byte stream into messages. Each message is either a
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
// Content-Length over the limit is reported at once; up to plausible() it
// is not a resynchronisation: exactly that many bytes are discarded before
// the next frame. A larger one resynchronises as above.
//
// A Framer is not safe for concurrent use.
type Framer struct {
	br  *bufio.Reader
	max int
	// wait, when not nil, is called before each read of the input, which
	// may block (Conn.Read).
	wait func()

	started bool // the BOM check is done
	resync  bool // the last frame was an unusable header block
	// resyncFirst: the presumed body's first line may be a message (the
	// body of an implausible Content-Length is not there at all)
	resyncFirst bool
	pending     []byte // a line to read again (it interrupted a header block)
	skip        int64  // bytes of an over-limit body still to discard before the next frame
	err         error  // sticky input error, returned once pending input is used up
}

func NewFramer(r io.Reader, max, bufSize int) *Framer {
	if bufSize <= 0 {
		bufSize = framerBufSize
	}
	f := &Framer{max: max}
	f.br = bufio.NewReaderSize(waitReader{r, f}, bufSize)
	return f
}

// waitReader is a framer's input: it calls the framer's wait before each
// read.
type waitReader struct {
	r io.Reader
	f *Framer
}

func (w waitReader) Read(p []byte) (int, error) {
	if w.f.wait != nil {
		w.f.wait()
	}
	return w.r.Read(p)
}

// Next returns the next frame. Blank lines are skipped. The error is non-nil
// only when the input is exhausted: io.EOF at its end, or the reader's error.
// A frame's body is owned by the caller.
func (f *Framer) Next() (Frame, error) {
	if !f.started {
		f.started = true
		f.skipBOM()
	}
	skipped := 0
	if f.skip > 0 {
		d, err := discard(f.br, f.skip)
		f.skip = 0
		skipped += int(min(d, int64(^uint(0)>>1)))
		if err != nil {
			f.setErr(err)
		}
	}
	if f.resync {
		f.resync = false
		skipped = f.skipToMessage()
	}
	for {
		line, n, tooLong, err := f.readLine()
		if err != nil {
			return Frame{}, err
		}
		if tooLong {
			return Frame{Framing: FramingLine, Size: n, Skipped: skipped,
				Bad: fmt.Sprintf("line exceeds the %d-byte limit", f.max)}, nil
		}
		// A BOM may also open a later message (a client that re-opens its
		// writer per message); it is never part of the JSON.
		content := trimSpace(bytes.TrimPrefix(trimSpace(line), bom))
		if len(content) == 0 {
			skipped += n
			continue
		}
		if isHeader(content) {
			fr := f.readHeaderFramed(content, n)
			fr.Skipped = skipped
			return fr, nil
		}
		return Frame{Framing: FramingLine, Body: bytes.Clone(content), Size: n, Skipped: skipped}, nil
	}
}

// readHeaderFramed reads the rest of a header block whose first line is
// first (n bytes of input), then the body.
func (f *Framer) readHeaderFramed(first []byte, n int) Frame {
	fr := Frame{Framing: FramingHeader, Size: n}
	var (
		length   int64
		seen     bool
		badValue string
	)
	header := func(h []byte) {
		name, value, _ := bytes.Cut(h, []byte(":"))
		if !bytes.EqualFold(name, contentLength[:len(contentLength)-1]) {
			return
		}
		v, ok := parseLength(trimSpace(value))
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
			fr.Bad = "input ended inside a header block"
			return fr
		}
		fr.Size += m
		if tooLong {
			badValue = "header line too long"
			continue
		}
		content := trimSpace(line)
		if len(content) == 0 {
			break
		}
		if !isHeader(content) {
			// Not a header: this block is broken, and the line may well be
			// the next message. Read it again.
			f.pending = bytes.Clone(line)
			fr.Size -= m
			fr.Bad = "header block not ended by an empty line"
			return fr
		}
		header(content)
	}
	switch {
	case badValue != "":
		fr.Bad = badValue
		f.resync = true
	case !seen:
		fr.Bad = "missing Content-Length"
		f.resync = true
	case length > int64(f.max):
		// Answered at once: the body is skipped when the next frame is
		// asked for, after the error has gone out. A length no client
		// would really send (Content-Length: 1000000000000) is not waited
		// for at all: the framer resynchronises on the next message.
		fr.Bad = fmt.Sprintf("Content-Length %d exceeds the %d-byte limit", length, f.max)
		if length <= f.plausible() {
			f.skip = length
		} else {
			f.resync, f.resyncFirst = true, true
		}
	default:
		body := make([]byte, length)
		k, err := io.ReadFull(f.br, body)
		fr.Size += k
		if err != nil {
			f.setErr(err)
			fr.Bad = "input ended inside a body"
			return fr
		}
		fr.Body = bytes.TrimPrefix(body, bom)
	}
	return fr
}

// readLine reads through the next '\n' (or to the end of input) and returns
// the line with its terminator, which is valid only until the next read, and
// n, the number of bytes consumed. If the line, less its terminator, is longer
// than f.max, it is consumed without being kept and tooLong is set. err is
// non-nil only when no byte was read.
func (f *Framer) readLine() (line []byte, n int, tooLong bool, err error) {
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
	if !tooLong && len(trimEOL(line)) > f.max {
		tooLong, line = true, nil
	}
	return line, n, tooLong, nil
}

// skipToMessage discards input up to the next plausible message start after
// an unusable header block (see Framer) and returns the number of bytes
// discarded.
func (f *Framer) skipToMessage() int {
	skipped := 0
	lineStart := f.resyncFirst // else the presumed body's first line is never a message start
	f.resyncFirst = false
	boundary := true // a Content-Length header may start here
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
			p, _ = f.br.Peek(len(contentLength))
			if bytes.EqualFold(p, contentLength) {
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

func (f *Framer) skipBOM() {
	p, err := f.br.Peek(1)
	if err != nil || p[0] != bom[0] {
		if err != nil && err != bufio.ErrBufferFull {
			f.setErr(err)
		}
		return
	}
	if p, _ = f.br.Peek(len(bom)); bytes.Equal(p, bom) {
		f.br.Discard(len(bom))
	}
}

// setErr records the first input error; a truncated read counts as the end
// of input.
func (f *Framer) setErr(err error) {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	if f.err == nil {
		f.err = err
	}
}

// plausible is the largest over-limit Content-Length whose body is read
// and discarded exactly (a real message that is too big): four times the
// limit, and at least 64 MiB. A larger one is taken for garbage.
func (f *Framer) plausible() int64 { return max(4*int64(f.max), 64<<20) }

// discard discards n bytes of br without holding them.
func discard(br *bufio.Reader, n int64) (int64, error) {
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

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(v []byte) (int64, bool) {
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

// isHeader reports whether line (trimmed, non-empty) is a header line:
// a token followed by ':', and not the start of a JSON value.
func isHeader(line []byte) bool {
	switch c := line[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9'):
		return false
	}
	for i, c := range line {
		if c == ':' {
			return i > 0
		}
		if !isTokenChar(c) {
			return false
		}
	}
	return false
}

// isTokenChar reports whether c may appear in an HTTP header name.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimSpace trims JSON whitespace from both ends of b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// trimEOL removes one trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b, _ = bytes.CutSuffix(b, []byte("\n"))
	b, _ = bytes.CutSuffix(b, []byte("\r"))
	return b
}

package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkReader returns its data in the given chunk sizes (cycling; a
// size of 0 is read as 1), never more than asked for.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = max(r.sizes[r.i%len(r.sizes)], 1)
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// splitReader returns data in two reads, split at k.
func splitReader(data []byte, k int) io.Reader {
	return io.MultiReader(bytes.NewReader(data[:k]), bytes.NewReader(data[k:]))
}

// frames runs a framer over r and describes each frame: "L body" or
// "F body" for a message, "!L" or "!F" for bad input. It fails the test if
// the framer does not end with io.EOF within a bound of frames.
func frames(t testing.TB, r io.Reader, max, bufSize int) []string {
	t.Helper()
	f := NewFramer(r, max, bufSize)
	var out []string
	for range 10000 {
		fr, err := f.Next()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("next: %v", err)
			}
			return out
		}
		kind := "L"
		if fr.Framing == FramingHeader {
			kind = "F"
		}
		if fr.Bad != "" {
			if fr.Body != nil {
				t.Fatalf("bad frame %q has a body", fr.Bad)
			}
			out = append(out, "!"+kind)
		} else {
			if len(fr.Body) > max {
				t.Fatalf("frame of %d bytes exceeds max %d", len(fr.Body), max)
			}
			out = append(out, kind+" "+string(fr.Body))
		}
	}
	t.Fatal("framer did not reach EOF")
	return nil
}

func framed(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

const (
	stdioA = `{"a":1}`
	stdioB = `{"b":"two"}`
)

var stdioFramerCases = []struct {
	name string
	in   string
	max  int // 0: 64
	want []string
}{
	{"line", stdioA + "\n", 0, []string{"L " + stdioA}},
	{"line CRLF", stdioA + "\r\n", 0, []string{"L " + stdioA}},
	{"last line without newline", stdioA + "\n" + stdioB, 0, []string{"L " + stdioA, "L " + stdioB}},
	{"line with surrounding blanks", "  \t" + stdioA + " \r\n", 0, []string{"L " + stdioA}},
	{"framed", framed(stdioA), 0, []string{"F " + stdioA}},
	{"framed twice back to back", framed(stdioA) + framed(stdioB), 0, []string{"F " + stdioA, "F " + stdioB}},
	{"header name case", "content-LENGTH: 7\r\n\r\n" + stdioA, 0, []string{"F " + stdioA}},
	{"LF-only headers", "Content-Length: 7\n\n" + stdioA + "Content-Length:11\n\n" + stdioB, 0, []string{"F " + stdioA, "F " + stdioB}},
	{"extra headers", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 7\r\nX-Other: 1\r\n\r\n" + stdioA, 0, []string{"F " + stdioA}},
	{"header value blanks", "Content-Length: \t7 \r\n\r\n" + stdioA, 0, []string{"F " + stdioA}},
	{"repeated equal length", "Content-Length: 7\r\nContent-Length: 7\r\n\r\n" + stdioA, 0, []string{"F " + stdioA}},
	{"BOM then line", "\xEF\xBB\xBF" + stdioA + "\n", 0, []string{"L " + stdioA}},
	{"BOM then framed", "\xEF\xBB\xBF" + framed(stdioA), 0, []string{"F " + stdioA}},
	{"BOM before a later line is skipped", stdioA + "\n\xEF\xBB\xBF" + stdioB + "\n", 0, []string{"L " + stdioA, "L " + stdioB}},
	{"BOM inside a framed body is skipped", framed("\xEF\xBB\xBF" + stdioA), 0, []string{"F " + stdioA}},
	{"mixed", framed(stdioA) + stdioB + "\n" + framed(stdioB) + stdioA + "\n", 0,
		[]string{"F " + stdioA, "L " + stdioB, "F " + stdioB, "L " + stdioA}},
	{"framed body then CRLF", framed(stdioA) + "\r\n" + stdioB + "\n", 0, []string{"F " + stdioA, "L " + stdioB}},
	{"blank lines", "\n\r\n \t \n" + stdioA + "\n\n\n" + framed(stdioB) + "\n\n", 0, []string{"L " + stdioA, "F " + stdioB}},
	{"only blank lines", "\n\r\n  \n", 0, nil},
	{"empty", "", 0, nil},
	{"garbage line is passed on", "hello world\n" + stdioA + "\n", 0, []string{"L hello world", "L " + stdioA}},
	{"pretty-printed framed body", framed("{\n  \"a\": 1\n}\n"), 0, []string{"F {\n  \"a\": 1\n}\n"}},
	{"UTF-8 body counted in bytes", framed(`{"q":"HTTP 404 の意味は？"}`) + stdioA + "\n", 0,
		[]string{`F {"q":"HTTP 404 の意味は？"}`, "L " + stdioA}},
	{"zero length", "Content-Length: 0\r\n\r\n" + stdioA + "\n", 0, []string{"F ", "L " + stdioA}},

	// Bad header blocks: one bad frame, then resynchronisation.
	{"non-numeric length, next framed", "Content-Length: abc\r\n\r\n" + `{"x":1}` + framed(stdioA), 0, []string{"!F", "F " + stdioA}},
	{"negative length, next line", "Content-Length: -5\r\n\r\n" + `{"x":1}` + "\n" + stdioA + "\n", 0, []string{"!F", "L " + stdioA}},
	{"plus sign", "Content-Length: +7\r\n\r\n" + stdioA + "\r\n" + stdioB + "\n", 0, []string{"!F", "L " + stdioB}},
	{"overflowing length", "Content-Length: 99999999999999999999999\r\n\r\n" + stdioA + framed(stdioB), 0, []string{"!F", "F " + stdioB}},
	{"missing length", "Content-Type: text/plain\r\n\r\n" + `{"x":1}` + "\n" + stdioA + "\n", 0, []string{"!F", "L " + stdioA}},
	{"conflicting lengths", "Content-Length: 7\r\nContent-Length: 8\r\n\r\n" + stdioA + "\n" + stdioB + "\n", 0, []string{"!F", "L " + stdioB}},
	{"empty length", "Content-Length:\r\n\r\n" + framed(stdioA), 0, []string{"!F", "F " + stdioA}},
	{"bad length, next header right away", "Content-Length: x\r\n\r\n" + framed(stdioA), 0, []string{"!F", "F " + stdioA}},
	{"bad length, next header after blanks", "Content-Length: x\r\n\r\n{\"x\":1} \r\n\r\n" + framed(stdioA), 0, []string{"!F", "F " + stdioA}},
	{"bad length, lowercase next header", "Content-Length: x\r\n\r\n{\"x\":1}content-length: 7\r\n\r\n" + stdioA, 0, []string{"!F", "F " + stdioA}},
	{"bad length, header text inside a string is skipped", "Content-Length: x\r\n\r\n" + `{"q":"Content-Length: 5"}` + "\n" + stdioA + "\n", 0, []string{"!F", "L " + stdioA}},
	{"bad length, multi-line body skipped", "Content-Length: x\r\n\r\n{\n  \"a\": [\n  1]\n}\n" + stdioA + "\n", 0, []string{"!F", "L " + stdioA}},
	{"bad length at end of input", "Content-Length: x\r\n\r\n" + `{"x":1}`, 0, []string{"!F"}},
	{"header block broken by a message", "X-Foo: bar\n" + stdioA + "\n", 0, []string{"!F", "L " + stdioA}},
	{"header block broken by garbage", "Content-Length: 7\r\nnot a header\r\n" + stdioA + "\n", 0, []string{"!F", "L not a header", "L " + stdioA}},
	{"input ends in headers", "Content-Length: 7\r\n", 0, []string{"!F"}},
	{"input ends in body", "Content-Length: 70\r\n\r\n" + stdioA, 0, []string{"!F"}},

	// Limits.
	{"oversized length, body skipped", framed(strings.Repeat("x", 65)) + stdioA + "\n" + framed(stdioB), 64,
		[]string{"!F", "L " + stdioA, "F " + stdioB}},
	{"length at the limit", framed(`{"s":"` + strings.Repeat("x", 56) + `"}`), 64, []string{"F " + `{"s":"` + strings.Repeat("x", 56) + `"}`}},
	{"oversized length, input ends", "Content-Length: 1000\r\n\r\n" + stdioA, 64, []string{"!F"}},
	{"over-long line", `{"s":"` + strings.Repeat("x", 200) + "\"}\n" + stdioA + "\n", 64, []string{"!L", "L " + stdioA}},
	{"over-long line at end of input", stdioA + "\n" + strings.Repeat("x", 200), 64, []string{"L " + stdioA, "!L"}},
	{"line at the limit with CRLF", `{"s":"` + strings.Repeat("x", 56) + "\"}\r\n", 64, []string{"L " + `{"s":"` + strings.Repeat("x", 56) + `"}`}},
	{"line one over the limit", `{"s":"` + strings.Repeat("x", 57) + "\"}\r\n" + stdioA + "\n", 64, []string{"!L", "L " + stdioA}},
	{"over-long first header line", "X-Long: " + strings.Repeat("x", 200) + "\r\nContent-Length: 7\r\n\r\n" + stdioA + "\n" + stdioB + "\n", 64,
		[]string{"!L", "F " + stdioA, "L " + stdioB}},
	{"over-long header line in a block", "Content-Length: 7\r\nX-Long: " + strings.Repeat("x", 200) + "\r\n\r\n" + stdioA + "\n" + stdioB + "\n", 64,
		[]string{"!F", "L " + stdioB}},
}

func TestFramerCases(t *testing.T) {
	for _, tc := range stdioFramerCases {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 64
			}
			in := []byte(tc.in)
			check := func(how string, r io.Reader, bufSize int) {
				t.Helper()
				got := frames(t, r, max, bufSize)
				if !slices.Equal(got, tc.want) {
					t.Fatalf("%s:\n got  %q\n want %q", how, got, tc.want)
				}
			}
			for _, bufSize := range []int{16, 4096} {
				check("one read", bytes.NewReader(in), bufSize)
				check("one byte at a time", iotest.OneByteReader(bytes.NewReader(in)), bufSize)
				check("with EOF on last data", iotest.DataErrReader(bytes.NewReader(in)), bufSize)
				for k := 1; k < len(in); k++ {
					check(fmt.Sprintf("split at %d", k), splitReader(in, k), bufSize)
				}
				check("chunks of 3 and 5", &chunkReader{data: in, sizes: []int{3, 5}}, bufSize)
			}
		})
	}
}

// An oversized body is skipped by streaming: the framer reads it without
// holding it.
func TestFramerOversizedBodyIsStreamed(t *testing.T) {
	const size = 8 << 20
	r := io.MultiReader(
		strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n", size)),
		io.LimitReader(zeros{}, size),
		strings.NewReader(stdioA+"\n"),
	)
	f := NewFramer(r, 1<<10, 0)
	fr, err := f.Next()
	if err != nil || fr.Bad == "" {
		t.Fatalf("first frame = %+v, %v; want a bad frame", fr, err)
	}
	// The error comes first; the body is skipped on the way to the next.
	if fr, err = f.Next(); err != nil || string(fr.Body) != stdioA || fr.Skipped < size {
		t.Fatalf("second frame = %q (skipped %d), %v; want %s after the body", fr.Body, fr.Skipped, err, stdioA)
	}
	if _, err := f.Next(); err != io.EOF {
		t.Fatalf("third next: %v, want EOF", err)
	}
}

// A Content-Length no client would send is answered at once and not
// waited for: the next message is read (finding: "Content-Length:
// 1000000000000" swallowed everything until stdin closed).
func TestFramerImplausibleLengthResynchronises(t *testing.T) {
	for _, next := range []string{stdioA + "\n", frameOf(stdioA)} {
		f := NewFramer(strings.NewReader("Content-Length: 1000000000000\r\n\r\n"+next), 1<<10, 0)
		fr, err := f.Next()
		if err != nil || !strings.Contains(fr.Bad, "exceeds") {
			t.Fatalf("first frame = %+v, %v; want the limit error", fr, err)
		}
		if fr, err = f.Next(); err != nil || string(fr.Body) != stdioA {
			t.Fatalf("second frame = %+v, %v; want %s", fr, err, stdioA)
		}
	}
}

func frameOf(s string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(s), s) }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// An over-long line is discarded up to its newline without holding it.
func TestFramerLongLineIsStreamed(t *testing.T) {
	const size = 8 << 20
	r := io.MultiReader(
		io.LimitReader(zeros{}, size),
		strings.NewReader("\n"+stdioA+"\n"),
	)
	f := NewFramer(r, 1<<10, 0)
	fr, err := f.Next()
	if err != nil || fr.Bad == "" || fr.Size != size+1 || fr.Framing != FramingLine {
		t.Fatalf("first frame = %+v, %v; want a bad line of %d bytes", fr, err, size+1)
	}
	if fr, err = f.Next(); err != nil || string(fr.Body) != stdioA {
		t.Fatalf("second frame = %q, %v; want %s", fr.Body, err, stdioA)
	}
}

// A read error ends the frames after the data before it, and is returned.
func TestFramerReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(stdioA+"\n"+stdioB), iotest.ErrReader(boom))
	f := NewFramer(r, 64, 0)
	for _, want := range []string{stdioA, stdioB} {
		fr, err := f.Next()
		if err != nil || string(fr.Body) != want {
			t.Fatalf("next = %q, %v; want %s", fr.Body, err, want)
		}
	}
	if _, err := f.Next(); err != boom {
		t.Fatalf("next: %v, want %v", err, boom)
	}
	if _, err := f.Next(); err != boom {
		t.Fatalf("next again: %v, want %v", err, boom)
	}
}

func TestFramerSizes(t *testing.T) {
	in := "\n" + framed(stdioA) + "\r\n" + stdioB + "\n"
	f := NewFramer(strings.NewReader(in), 64, 0)
	fr, _ := f.Next()
	if want := len(framed(stdioA)); fr.Size != want || fr.Skipped != 1 {
		t.Errorf("framed: size %d skipped %d, want %d and 1", fr.Size, fr.Skipped, want)
	}
	fr, _ = f.Next()
	if want := len(stdioB) + 1; fr.Size != want || fr.Skipped != 2 {
		t.Errorf("line: size %d skipped %d, want %d and 2", fr.Size, fr.Skipped, want)
	}
}

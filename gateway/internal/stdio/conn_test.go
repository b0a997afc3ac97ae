package stdio

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// recWriter records every Write, keeping the slices it was given.
type recWriter struct {
	out   bytes.Buffer
	calls [][]byte
}

func (w *recWriter) Write(p []byte) (int, error) {
	w.calls = append(w.calls, p)
	return w.out.Write(p)
}

// WriteParts writes a large message after what Buffer holds, framed like
// the client's input, from its own parts: no write gets a copy of them.
func TestWritePartsLargeMessage(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3*maxPending)
	msg := `{"r":"` + string(big) + `"}`
	for _, tc := range []struct {
		name, input string
		frame       func(string) string
	}{
		{"line", stdioA + "\n", func(m string) string { return m + "\n" }},
		{"header", frameOf(stdioA), func(m string) string { return "Content-Length: " + strconv.Itoa(len(m)) + "\r\n\r\n" + m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &recWriter{}
			c := New(strings.NewReader(tc.input), w, Options{})
			if _, _, err := c.Read(); err != nil {
				t.Fatal(err)
			}
			if err := c.Buffer([]byte(stdioA)); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteParts([]byte(`{"r":"`), big, []byte(`"}`)); err != nil {
				t.Fatal(err)
			}
			if want := tc.frame(stdioA) + tc.frame(msg); w.out.String() != want {
				t.Fatalf("wrote %d bytes %.80q..., want %d bytes %.80q...", w.out.Len(), w.out.String(), len(want), want)
			}
			shared := false
			for _, p := range w.calls {
				shared = shared || len(p) == len(big) && &p[0] == &big[0]
			}
			if !shared {
				t.Errorf("the large part was copied before being written (%d writes)", len(w.calls))
			}
			// A small message still goes out in one write.
			w.calls = nil
			if err := c.WriteParts([]byte(`{"a":`), []byte(`1}`)); err != nil {
				t.Fatal(err)
			}
			if len(w.calls) != 1 || string(w.calls[0]) != tc.frame(`{"a":1}`) {
				t.Errorf("small message written as %q", w.calls)
			}
		})
	}
}

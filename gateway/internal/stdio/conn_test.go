package stdio

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// gateWriter records what is written; with hold set, each Write says it
// has begun and then waits for release, as a write to a client that does
// not read.
type gateWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	hold    bool
	began   chan struct{}
	release chan struct{}
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	hold := w.hold
	w.mu.Unlock()
	if hold {
		w.began <- struct{}{}
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *gateWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
}

func progress(key string, n int) []byte {
	return fmt.Appendf(nil, `{"method":"notifications/progress","params":{"progressToken":%q,"progress":%d}}`, key, n)
}

// A client that keeps up gets every progress notification of a burst, in
// order, up to latestRoom bytes of them per write; beyond that only the
// latest per key.
func TestBufferLatestKeepsABurst(t *testing.T) {
	w := &gateWriter{}
	c := New(strings.NewReader(""), w, Options{})
	n := latestRoom / len(progress("a", 100)) // fits whole
	for i := range n {
		c.BufferLatest(`"a"`, progress("a", i))
	}
	c.Flush()
	if got := w.lines(); len(got) != n || got[n-1] != string(progress("a", n-1)) {
		t.Fatalf("a burst of %d: %d lines, last %q", n, len(got), got[len(got)-1])
	}
	w.buf.Reset()
	for i := range 1000 {
		c.BufferLatest(`"a"`, progress("a", i))
	}
	c.Flush()
	got := w.lines()
	if len(got) > n+1 || got[len(got)-1] != string(progress("a", 999)) || got[0] != string(progress("a", 0)) {
		t.Fatalf("1000 at once: %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

// While another goroutine is stuck writing to a client that does not read,
// 300,000 progress notifications for two calls cost nothing but the
// latest of each, and they go out before the response queued after them.
func TestBufferLatestFloodWhileClientIsSlow(t *testing.T) {
	w := &gateWriter{hold: true, began: make(chan struct{}), release: make(chan struct{})}
	c := New(strings.NewReader(""), w, Options{})
	wrote := make(chan error)
	go func() { wrote <- c.Write([]byte(`{"id":1,"result":{}}`)) }()
	<-w.began // the writer holds the connection, blocked on the client

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 300_000 {
		key := []string{`"a"`, `"b"`}[i%2]
		if err := c.BufferLatest(key, progress(key[1:2], i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Errorf("the heap grew by %d bytes for a flood to a slow client", grown)
	}
	if n := int32(c.latest.Len()); n != 2 {
		t.Errorf("%d messages kept, want 2 (one per key)", n)
	}
	w.mu.Lock()
	w.hold = false
	w.mu.Unlock()
	close(w.release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	c.Write([]byte(`{"id":"a-call","result":{}}`)) // the response of the call of "a"
	want := []string{`{"id":1,"result":{}}`, string(progress("a", 299998)), string(progress("b", 299999)), `{"id":"a-call","result":{}}`}
	if got := w.lines(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("written:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

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
			if _, _, err := c.Read(nil); err != nil {
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

// BufferAppend holds a message made where it is held, in order with
// Buffer's, framed as the client frames its input, until Flush; past
// maxPending it writes at once; after Close it fails.
func TestBufferAppend(t *testing.T) {
	add := func(s string) func([]byte) []byte {
		return func(b []byte) []byte { return append(b, s...) }
	}
	w := &gateWriter{}
	c := New(strings.NewReader(""), w, Options{})
	c.Buffer([]byte(`{"a":1}`))
	if err := c.BufferAppend(add(`{"b":2}`)); err != nil {
		t.Fatal(err)
	}
	if w.buf.Len() != 0 {
		t.Fatalf("written before the flush: %q", w.buf.String())
	}
	c.Flush()
	if got := w.buf.String(); got != "{\"a\":1}\n{\"b\":2}\n" {
		t.Fatalf("line framed: %q", got)
	}

	// A client that frames with Content-Length gets a header.
	w = &gateWriter{}
	c = New(strings.NewReader("Content-Length: 2\r\n\r\n{}"), w, Options{})
	if _, _, err := c.Read(nil); err != nil {
		t.Fatal(err)
	}
	c.BufferAppend(add(`{"b":2}`))
	c.Flush()
	if got := w.buf.String(); got != "Content-Length: 7\r\n\r\n{\"b\":2}" {
		t.Fatalf("header framed: %q", got)
	}

	// Enough held is written without a flush.
	w = &gateWriter{}
	c = New(strings.NewReader(""), w, Options{})
	big := `"` + strings.Repeat("x", maxPending) + `"`
	c.BufferAppend(add(big))
	if w.buf.Len() != len(big)+1 {
		t.Fatalf("%d bytes held: %d written, want all", len(big)+1, w.buf.Len())
	}

	c.Close()
	if err := c.BufferAppend(add(`{}`)); err != ErrClosed {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

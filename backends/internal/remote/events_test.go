package remote

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// The event-stream format as the WHATWG spec reads it: any line end,
// multi-line data joined with LF, comments, fields without a value, a
// space after the colon dropped once, and a last event without its blank
// line not dispatched.
func TestSSEReader(t *testing.T) {
	in := ": comment\r\n" +
		"event: endpoint\r\ndata: /messages?s=1\r\n\r\n" +
		"id: 7\rretry: 500\rdata\r\r" +
		"data: {\"a\":\ndata:  1}\n\n" +
		"data: cut"
	r := newSSEReader(strings.NewReader(in))
	want := []sseEvent{
		{name: "endpoint", data: []byte("/messages?s=1")},
		{id: "7", retry: "500", data: []byte("")},
		{data: []byte("{\"a\":\n 1}")},
	}
	for i, w := range want {
		ev, err := r.next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.name != w.name || ev.id != w.id || ev.retry != w.retry || string(ev.data) != string(w.data) {
			t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, ev, ev.data, w, w.data)
		}
	}
	if _, err := r.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("after the last event: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestSSEReaderLimit(t *testing.T) {
	r := newSSEReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	r.max = 50
	if _, err := r.next(); !errors.Is(err, errEventTooLarge) {
		t.Errorf("got %v, want errEventTooLarge", err)
	}
}

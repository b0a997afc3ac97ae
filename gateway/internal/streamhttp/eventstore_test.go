package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// check fails the test unless the store's byte count is what its streams
// hold and its kept completed streams are counted right.
func (s *EventStore) check(t *testing.T) {
	t.Helper()
	bytes, done := 0, 0
	for _, ss := range s.sessions {
		for _, st := range ss.streams {
			n := 0
			for _, d := range st.data {
				n += len(d)
			}
			if n != st.size {
				t.Fatalf("a stream holds %d bytes, counts %d", n, st.size)
			}
			bytes += n
		}
		done += len(ss.done)
	}
	if bytes != s.bytes || done != s.liveDone {
		t.Fatalf("store counts %d bytes and %d completed streams, holds %d and %d", s.bytes, s.liveDone, bytes, done)
	}
}

func replay(t *testing.T, s *EventStore, session, stream string, after int) ([]string, error) {
	t.Helper()
	var out []string
	for d, err := range s.After(context.Background(), session, stream, after) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

// A long session keeps its open streams and its last keepDone completed
// ones, not every stream it ever had; what it keeps replays.
func TestEventStoreForgetsOldCompletedStreams(t *testing.T) {
	ctx := context.Background()
	s := NewEventStore(10<<20, 100)
	_ = s.Open(ctx, "S", "")
	_ = s.Open(ctx, "S", "open")
	_ = s.Append(ctx, "S", "open", []byte("o0"))
	for i := range 10000 {
		id := fmt.Sprint("p", i)
		_ = s.Open(ctx, "S", id)
		_ = s.Append(ctx, "S", id, nil) // the priming event
		_ = s.Append(ctx, "S", id, []byte(id))
		s.StreamDone("S", id)
	}
	s.check(t)
	if n := len(s.sessions["S"].streams); n != 102 {
		t.Errorf("the session keeps %d streams, want the two open ones and 100 completed", n)
	}
	if len(s.done) > 2*s.liveDone+64 {
		t.Errorf("%d entries listed for %d completed streams kept", len(s.done), s.liveDone)
	}
	if got, err := replay(t, s, "S", "p9999", 0); err != nil || !slices.Equal(got, []string{"p9999"}) {
		t.Errorf("replay of the last stream: %q, %v", got, err)
	}
	if got, err := replay(t, s, "S", "open", -1); err != nil || !slices.Equal(got, []string{"o0"}) {
		t.Errorf("replay of the open stream: %q, %v", got, err)
	}
	if _, err := replay(t, s, "S", "p0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("replay of a forgotten stream: %v, want ErrEventsPurged", err)
	}
	_ = s.SessionClosed(ctx, "S")
	// A write racing the session's end leaves nothing behind.
	_ = s.Open(ctx, "S", "late")
	_ = s.Append(ctx, "S", "late", []byte("x"))
	_ = s.Append(ctx, "S", "", []byte("x"))
	s.check(t)
	if s.bytes != 0 || len(s.sessions) != 0 {
		t.Errorf("after SessionClosed: %d bytes, %d sessions", s.bytes, len(s.sessions))
	}
}

// Over its byte bound, the store drops completed streams first, then the
// first events of open ones (never the one being appended), and a replay
// from a dropped event says so.
func TestEventStoreBytesBound(t *testing.T) {
	ctx := context.Background()
	s := NewEventStore(1000, 100)
	ev := func(c byte) []byte { return slices.Repeat([]byte{c}, 100) }
	_ = s.Open(ctx, "S", "")
	_ = s.Open(ctx, "T", "")
	_ = s.Open(ctx, "T", "live")
	_ = s.Open(ctx, "T", "big")
	for _, id := range []string{"a", "b", "c"} {
		_ = s.Open(ctx, "S", id)
		_ = s.Append(ctx, "S", id, ev(id[0]))
		_ = s.Append(ctx, "S", id, ev(id[0]))
	}
	s.StreamDone("S", "a")
	s.StreamDone("S", "b")
	for range 5 {
		_ = s.Append(ctx, "T", "live", ev('t'))
	}
	s.check(t)
	if s.bytes > 1000 {
		t.Fatalf("%d bytes held, bound 1000", s.bytes)
	}
	// 1,100 bytes were appended: the oldest completed stream went, whole.
	if s.sessions["S"].get("a") != nil || s.sessions["S"].get("b") == nil {
		t.Errorf("completed streams kept: a %v, b %v; want only b", s.sessions["S"].get("a") != nil, s.sessions["S"].get("b") != nil)
	}
	for range 10 {
		_ = s.Append(ctx, "T", "live", ev('t'))
	}
	s.check(t)
	if s.bytes > 1000 {
		t.Fatalf("%d bytes held, bound 1000", s.bytes)
	}
	if _, err := replay(t, s, "T", "live", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("replay from a dropped event: %v, want ErrEventsPurged", err)
	}
	if got, err := replay(t, s, "T", "live", 13); err != nil || len(got) != 1 {
		t.Errorf("replay of the last event: %d events, %v", len(got), err)
	}
	// One event larger than the bound is kept: it is the stream's last.
	_ = s.Append(ctx, "T", "big", slices.Repeat([]byte{'x'}, 5000))
	s.check(t)
	if got, err := replay(t, s, "T", "big", -1); err != nil || len(got) != 1 {
		t.Errorf("replay of a large event: %d events, %v", len(got), err)
	}
}

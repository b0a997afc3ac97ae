package streamhttp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestQueueCoalescesAndBounds: while the writer is behind, progress
// keeps only the latest per key and goes out before the next message; a
// message beyond the session's budget is refused, but one that arrives
// while nothing waits always goes, however large.
func TestQueueCoalescesAndBounds(t *testing.T) {
	b := NewBudget(8000) // more than coalesce.Room, as every budget allowed
	q := NewQueue(b)
	if err := q.Put("", bytes.Repeat([]byte("r"), 20000)); err != nil {
		t.Fatalf("a large message into an empty queue: %v", err)
	}
	first := q.Take() // the writer is now busy with it: behind
	if len(first) != 1 || b.queued.Load() != 0 {
		t.Fatalf("take: %d messages, %d bytes still counted", len(first), b.queued.Load())
	}
	for i := range 10000 {
		if err := q.Put("p", fmt.Appendf(nil, "progress %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Put("", []byte("result")); err != nil {
		t.Fatal(err)
	}
	q.Written()
	got := q.Take()
	var progress int
	for _, m := range got[:len(got)-1] {
		if !bytes.HasPrefix(m, []byte("progress ")) {
			t.Fatalf("unexpected %q before the result", m)
		}
		progress++
	}
	if string(got[len(got)-2]) != "progress 9999" || string(got[len(got)-1]) != "result" {
		t.Errorf("the last two: %q, %q; want the latest progress, then the result", got[len(got)-2], got[len(got)-1])
	}
	if progress > 1000 {
		t.Errorf("%d progress messages kept of 10000: not coalesced", progress)
	}
	q.Written()

	// Nothing written: the budget fills and the next message is refused.
	if err := q.Put("", bytes.Repeat([]byte("a"), 5000)); err != nil {
		t.Fatal(err)
	}
	if err := q.Put("", bytes.Repeat([]byte("b"), 5000)); !errors.Is(err, ErrOverBudget) {
		t.Errorf("beyond the budget: %v, want ErrOverBudget", err)
	}
	if err := q.Put("k", bytes.Repeat([]byte("c"), 5000)); err != nil {
		t.Errorf("progress beyond the budget: %v, want it kept (coalesced)", err)
	}
	q.Drop()
	if n := b.queued.Load(); n != 0 {
		t.Errorf("%d bytes counted after drop", n)
	}
}

package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestOutQueueCoalescesAndBounds: while the writer is behind, progress
// keeps only the latest per key and goes out before the next message; a
// message beyond the session's budget is refused, but one that arrives
// while nothing waits always goes, however large.
func TestOutQueueCoalescesAndBounds(t *testing.T) {
	b := &outBudget{limit: 8000} // more than coalesce.Room, as every budget allowed
	q := newOutQueue(b)
	if err := q.put("", bytes.Repeat([]byte("r"), 20000)); err != nil {
		t.Fatalf("a large message into an empty queue: %v", err)
	}
	first := q.take() // the writer is now busy with it: behind
	if len(first) != 1 || b.queued.Load() != 0 {
		t.Fatalf("take: %d messages, %d bytes still counted", len(first), b.queued.Load())
	}
	for i := range 10000 {
		if err := q.put("p", fmt.Appendf(nil, "progress %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.put("", []byte("result")); err != nil {
		t.Fatal(err)
	}
	q.written()
	got := q.take()
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
	q.written()

	// Nothing written: the budget fills and the next message is refused.
	if err := q.put("", bytes.Repeat([]byte("a"), 5000)); err != nil {
		t.Fatal(err)
	}
	if err := q.put("", bytes.Repeat([]byte("b"), 5000)); !errors.Is(err, errOverBudget) {
		t.Errorf("beyond the budget: %v, want errOverBudget", err)
	}
	if err := q.put("k", bytes.Repeat([]byte("c"), 5000)); err != nil {
		t.Errorf("progress beyond the budget: %v, want it kept (coalesced)", err)
	}
	q.drop()
	if n := b.queued.Load(); n != 0 {
		t.Errorf("%d bytes counted after drop", n)
	}
}

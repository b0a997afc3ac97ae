package flush

import (
	"sync"
	"sync/atomic"
	"testing"
)

// writer counts its flushes; holding marks it in set once per burst, as
// the Set's writers do.
type writer struct {
	set     *Set
	held    atomic.Int64 // items held, not flushed yet
	marked  atomic.Bool
	flushes atomic.Int64
}

func (w *writer) hold() {
	w.held.Add(1)
	if w.marked.CompareAndSwap(false, true) {
		w.set.Mark(w)
	}
}

func (w *writer) Flush() {
	w.marked.Store(false)
	w.held.Store(0)
	w.flushes.Add(1)
}

// A Flush touches the writers marked since the last one and no other: an
// idle writer is never flushed, and a writer is flushed once per burst
// however much it held.
func TestSetFlushesOnlyMarked(t *testing.T) {
	var s Set
	busy, idle := &writer{set: &s}, &writer{set: &s}
	s.Flush() // nothing marked: nothing to do
	for range 3 {
		busy.hold()
	}
	s.Flush()
	s.Flush() // nothing held since: nothing to do
	if got := busy.flushes.Load(); got != 1 {
		t.Errorf("a writer that held 3 messages in one burst was flushed %d times, want 1", got)
	}
	if got := idle.flushes.Load(); got != 0 {
		t.Errorf("a writer that held nothing was flushed %d times, want 0", got)
	}
	busy.hold()
	s.Flush()
	if got := busy.flushes.Load(); got != 2 {
		t.Errorf("a writer that held again after a flush was flushed %d times in all, want 2", got)
	}
}

// What a writer holds while Flushes run on other goroutines is never left
// behind: after the holders stop, one more Flush leaves nothing held.
func TestSetLosesNothingUnderConcurrentFlushes(t *testing.T) {
	var s Set
	ws := make([]*writer, 4)
	for i := range ws {
		ws[i] = &writer{set: &s}
	}
	var holders, flushers sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		flushers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					s.Flush()
				}
			}
		})
	}
	for _, w := range ws {
		holders.Go(func() {
			for range 2000 {
				w.hold()
			}
		})
	}
	holders.Wait()
	close(stop)
	flushers.Wait()
	s.Flush()
	for i, w := range ws {
		if n := w.held.Load(); n != 0 {
			t.Errorf("writer %d still holds %d after the last Flush", i, n)
		}
	}
}

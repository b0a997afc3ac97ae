// Package flush is how the gateway batches writes without flushing
// everything: a writer that holds output back for a burst marks itself in
// a Set, and the end of the burst flushes just the writers marked, so an
// idle session or backend costs nothing. The gateway uses one Set for the
// requests its session readers hold for the backends (flushed before a
// reader waits for input) and one for the messages the backends' read
// loops hold for the clients (flushed when a read loop has handled all it
// read). It is a plain package, not internal, because both backends/ and
// gateway/ mark writers in the same Set; it is not API.
package flush

import "sync"

// A Writer holds output back until Flush.
type Writer interface {
	// Flush writes what the Writer holds. It must not block for long: it
	// runs at the flush point of every writer of the Set.
	Flush()
}

// Set is the writers that hold something back until the Set's next Flush.
// The zero Set is empty and ready to use; it is safe for concurrent use.
type Set struct {
	mu     sync.Mutex
	marked []Writer
	spare  []Writer // the last Flush's slice, for the next burst
}

// Mark records that w holds output back for the next Flush. A writer
// marks itself once per burst, when it starts holding something (the Set
// does not deduplicate: one marked twice is flushed twice), and after the
// output it holds is in place, so that a Flush that runs meanwhile either
// writes it or leaves w marked for the next.
func (s *Set) Mark(w Writer) {
	s.mu.Lock()
	s.marked = append(s.marked, w)
	s.mu.Unlock()
}

// Flush flushes the writers marked since the last Flush, and only those;
// each is unmarked before its Flush runs, so one that holds something
// again marks itself again.
func (s *Set) Flush() {
	s.mu.Lock()
	ws := s.marked
	if len(ws) == 0 {
		s.mu.Unlock()
		return
	}
	s.marked, s.spare = s.spare, nil
	s.mu.Unlock()
	for _, w := range ws {
		w.Flush()
	}
	clear(ws) // drop the references: a flushed writer may be gone
	s.mu.Lock()
	if s.spare == nil && cap(ws) <= maxSpare {
		s.spare = ws[:0]
	}
	s.mu.Unlock()
}

// maxSpare bounds the array a Set keeps between bursts.
const maxSpare = 1024

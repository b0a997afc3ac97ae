package backends

import (
	"slices"
	"sync"
)

// notifier calls Hooks.Changed from its own goroutine, in order, never
// with a lock of the Manager held. A name already queued and not yet
// delivered is not queued twice (the callback reads the current lists).
type notifier struct {
	fn func(server string)

	mu     sync.Mutex
	queue  []string
	closed bool
	wake   chan struct{} // capacity 1
	done   chan struct{} // closed when run returns
}

func newNotifier(fn func(string)) *notifier {
	n := &notifier{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go n.run()
	return n
}

func (n *notifier) changed(server string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if n.closed || slices.Contains(n.queue, server) {
		n.mu.Unlock()
		return
	}
	n.queue = append(n.queue, server)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run() {
	defer close(n.done)
	for range n.wake {
		for {
			n.mu.Lock()
			if len(n.queue) == 0 {
				closed := n.closed
				n.mu.Unlock()
				if closed {
					return
				}
				break
			}
			s := n.queue[0]
			n.queue = n.queue[1:]
			n.mu.Unlock()
			n.fn(s)
		}
	}
}

// close delivers what is queued, then stops the goroutine and waits for it.
func (n *notifier) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	<-n.done
}

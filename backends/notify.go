package backends

import (
	"slices"
	"sync"
)

// notifier calls Hooks.Changed (or CallerChanged, for a caller's own
// session) from its own goroutine, in order, never with a lock of the
// Manager held. A change already queued and not yet delivered is not
// queued twice (the callback reads the current lists).
type notifier struct {
	fn func(listChange)

	mu     sync.Mutex
	queue  []listChange
	closed bool
	wake   chan struct{} // capacity 1
	done   chan struct{} // closed when run returns
}

// listChange is a change to a server's lists: everyone's, or, when caller is
// not "", only that caller's own session's (upstream.go).
type listChange struct{ server, caller string }

func newNotifier(fn func(listChange)) *notifier {
	n := &notifier{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go n.run()
	return n
}

func (n *notifier) changed(server string) { n.add(listChange{server: server}) }

// callerChanged is a change to caller's own session's lists of server.
func (n *notifier) callerChanged(server, caller string) {
	n.add(listChange{server: server, caller: caller})
}

func (n *notifier) add(c listChange) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if n.closed || slices.Contains(n.queue, c) {
		n.mu.Unlock()
		return
	}
	n.queue = append(n.queue, c)
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

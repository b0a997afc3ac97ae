// Package coalesce holds the messages that a later one of the same key
// makes obsolete (a call's progress) while a client reads slowly: one per
// key, the latest. Every transport that queues for a slow client keeps
// them here, so that a flood of progress costs one message per call
// whatever the client's pace.
package coalesce

import (
	"sync"
	"sync/atomic"
)

// Room is how many bytes of coalescable messages a transport may queue in
// order, all of them, between two writes to the client; beyond it only
// the latest per key is kept. A burst of a few dozen progress
// notifications is forwarded as it came; a flood is not.
const Room = 4 << 10

// Latest keeps the latest message per key, in the order the keys first
// came. Its zero value is empty and ready; it is safe for concurrent use.
type Latest struct {
	mu    sync.Mutex
	msgs  map[string][]byte
	order []string
	n     atomic.Int32 // len(msgs), read without mu so that an empty set costs nothing
}

// Put keeps msg as the latest of key, in place of the one it held.
func (l *Latest) Put(key string, msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msgs == nil {
		l.msgs = map[string][]byte{}
	}
	if _, ok := l.msgs[key]; !ok {
		l.order = append(l.order, key)
	}
	l.msgs[key] = msg
	l.n.Store(int32(len(l.msgs)))
}

// Len reports how many keys hold a message.
func (l *Latest) Len() int { return int(l.n.Load()) }

// Take calls f with each message held, in the order their keys first
// came, and empties the set.
func (l *Latest) Take(f func(msg []byte)) {
	if l.n.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.order {
		f(l.msgs[k])
	}
	clear(l.msgs)
	l.order = l.order[:0]
	l.n.Store(0)
}

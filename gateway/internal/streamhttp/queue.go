package streamhttp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/coalesce"
)

// Budget is one session's byte budget, shared by its streams' queues: what
// waits in them for a writer to take it.
type Budget struct {
	limit  int64
	queued atomic.Int64 // bytes waiting for a writer to take them
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// ErrOverBudget is Put's answer to a message beyond the session's budget.
var ErrOverBudget = errors.New("the client does not read its stream")

// overBudgetError says which budget a session went beyond.
func overBudgetError(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes waiting for it", ErrOverBudget, limit)
}

// Queue is the messages waiting for one stream's writer: the goroutine
// serving that stream's request, never the one that produced them (a
// backend's read loop, which every session shares), so that a client that
// stops reading holds up only its own stream. Put never waits; the writer
// waits on Wake, takes what is queued (Take), writes it, and then says so
// (Written). Its methods are safe for concurrent use.
//
// A session's queues together hold at most its Budget of messages.
// Messages that a later one of the same key makes obsolete (a call's
// progress) are coalesced per key while the writer is behind (package
// coalesce), so a flood of them never reaches the budget.
type Queue struct {
	budget *Budget
	wake   chan struct{} // has a value when something was queued since the last take

	mu          sync.Mutex
	msgs        [][]byte
	bytes       int64 // of msgs
	latestBytes int   // of coalescable messages in msgs, in order since the last take
	busy        bool  // the writer is writing what it took
	latest      coalesce.Latest
}

// NewQueue returns an empty queue that counts against b.
func NewQueue(b *Budget) *Queue {
	return &Queue{budget: b, wake: make(chan struct{}, 1)}
}

// Put queues msg for the writer. A message with a key is one that a later
// one of the same key makes obsolete: while the writer is behind, beyond
// coalesce.Room bytes of them, only the latest per key is kept, to go out
// after what is queued now. A message without one goes after everything
// queued; if the session's queues hold something already and it would take
// them beyond the budget, it is not queued and Put returns an error that
// is ErrOverBudget. So a session holds at most the budget waiting, and per
// stream the batch its writer is writing.
func (q *Queue) Put(key string, msg []byte) error {
	q.mu.Lock()
	behind := q.busy || len(q.msgs) > 0
	switch {
	case key != "" && behind && q.latestBytes+len(msg) > coalesce.Room:
		q.latest.Put(key, msg)
		q.mu.Unlock()
		q.signal()
		return nil
	case key != "":
		q.latestBytes += len(msg)
	default:
		n := q.budget.queued.Load()
		if n > 0 && n+int64(len(msg)) > q.budget.limit {
			q.mu.Unlock()
			return overBudgetError(q.budget.limit)
		}
		q.latest.Take(q.add) // older progress first
	}
	q.add(msg)
	q.mu.Unlock()
	q.signal()
	return nil
}

// add appends msg to msgs and counts it; q.mu is held.
func (q *Queue) add(msg []byte) {
	q.msgs = append(q.msgs, msg)
	q.bytes += int64(len(msg))
	q.budget.queued.Add(int64(len(msg)))
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake has a value when something was queued since the last Take: the
// writer waits on it.
func (q *Queue) Wake() <-chan struct{} { return q.wake }

// Take returns what is queued, in order, for the writer, which must call
// Written once it is written (or failed to be). What is being written
// no longer counts against the budget: a client that reads a large result
// at its own pace is not behind, and one that stopped reading is found out
// by what queues up behind it.
func (q *Queue) Take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.latest.Take(q.add)
	batch := q.msgs
	q.budget.queued.Add(-q.bytes)
	q.msgs, q.bytes, q.latestBytes = nil, 0, 0
	q.busy = len(batch) > 0
	return batch
}

// Written says that what Take returned is written.
func (q *Queue) Written() {
	q.mu.Lock()
	q.busy = false
	q.mu.Unlock()
}

// Drop forgets what is queued: the stream has no writer any more.
func (q *Queue) Drop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.latest.Take(func([]byte) {})
	q.budget.queued.Add(-q.bytes)
	q.msgs, q.bytes = nil, 0
}

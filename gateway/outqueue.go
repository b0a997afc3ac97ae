package gateway

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/coalesce"
)

// Over HTTP, what a session writes is queued for the writer of the stream
// it goes on — the goroutine serving that stream's request — and never
// written by the goroutine that produced it (a backend's read loop, which
// every session shares): a client that stops reading holds up only its own
// stream. Each session's queues together hold at most a byte budget of
// messages; a message that would go beyond it ends the session. Progress
// is coalesced per token while the client is behind (package coalesce),
// so a flood of it never reaches the budget.

// defaultSessionBufferBytes is the byte budget of one HTTP session's
// outgoing queues when HTTPOptions leave it unset.
const defaultSessionBufferBytes = 16 << 20

// outBudget is one session's byte budget, shared by its streams' queues.
type outBudget struct {
	limit  int64
	queued atomic.Int64 // bytes waiting for a writer to take them
}

// errOverBudget is put's answer to a message beyond the session's budget.
var errOverBudget = errors.New("the client does not read its stream")

// overBudgetError says which budget a session went beyond.
func overBudgetError(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes waiting for it", errOverBudget, limit)
}

// outQueue is the messages waiting for one stream's writer. put never
// waits; the writer takes what is queued (take), writes it, and then says
// so (written).
type outQueue struct {
	budget *outBudget
	wake   chan struct{} // has a value when something was queued since the last take

	mu          sync.Mutex
	msgs        [][]byte
	bytes       int64 // of msgs
	latestBytes int   // of coalescable messages in msgs, in order since the last take
	busy        bool  // the writer is writing what it took
	latest      coalesce.Latest
}

func newOutQueue(b *outBudget) *outQueue {
	return &outQueue{budget: b, wake: make(chan struct{}, 1)}
}

// put queues msg for the writer. A message with a key is one that a later
// one of the same key makes obsolete: while the writer is behind, beyond
// coalesce.Room bytes of them, only the latest per key is kept, to go out
// after what is queued now. A message without one goes after everything
// queued; if the session's queues hold something already and it would take
// them beyond the budget, it is not queued and put returns errOverBudget.
// So a session holds at most the budget waiting, and per stream the batch
// its writer is writing.
func (q *outQueue) put(key string, msg []byte) error {
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
func (q *outQueue) add(msg []byte) {
	q.msgs = append(q.msgs, msg)
	q.bytes += int64(len(msg))
	q.budget.queued.Add(int64(len(msg)))
}

func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns what is queued, in order, for the writer, which must call
// written once it is written (or failed to be). What is being written
// no longer counts against the budget: a client that reads a large result
// at its own pace is not behind, and one that stopped reading is found out
// by what queues up behind it.
func (q *outQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.latest.Take(q.add)
	batch := q.msgs
	q.budget.queued.Add(-q.bytes)
	q.msgs, q.bytes, q.latestBytes = nil, 0, 0
	q.busy = len(batch) > 0
	return batch
}

// written says that what take returned is written.
func (q *outQueue) written() {
	q.mu.Lock()
	q.busy = false
	q.mu.Unlock()
}

// drop forgets what is queued: the stream has no writer any more.
func (q *outQueue) drop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.latest.Take(func([]byte) {})
	q.budget.queued.Add(-q.bytes)
	q.msgs, q.bytes = nil, 0
}

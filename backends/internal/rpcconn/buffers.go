package rpcconn

import "sync"

// Buffers recycles the buffers a message is built in before it is
// written: a request is built once per call, copied into what is held or
// queued (or written at once), and its buffer is free again when send
// returns. The zero value is ready to use; it is safe for concurrent use.
type Buffers struct{ pool sync.Pool }

// maxKept is the largest buffer kept for reuse: a large message's buffer
// is left to the collector rather than pinned.
const maxKept = 64 << 10

// Get returns an empty buffer.
func (b *Buffers) Get() *[]byte {
	if buf, ok := b.pool.Get().(*[]byte); ok {
		return buf
	}
	buf := make([]byte, 0, 512)
	return &buf
}

// Put returns buf, which nothing may use any more, for reuse.
func (b *Buffers) Put(buf *[]byte) {
	if cap(*buf) > maxKept {
		return
	}
	*buf = (*buf)[:0]
	b.pool.Put(buf)
}

package rpcconn

import (
	"errors"
	"os"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
)

// Writing to a backend never blocks the caller. The gateway starts a call
// from the goroutine that reads its client, so a write that waited on a
// backend's full stdin pipe (a backend that stopped reading) would hold up
// every other message of the client: pings, cancellations, calls to other
// backends. A message is therefore written inline only when it surely fits
// in the pipe; otherwise it is queued for the conn's writer goroutine, which
// writes everything queued in one write (so many calls in flight batch).
//
// Whether a message fits is known without asking the OS: a backend that
// answered a request has read every byte written before that request's end
// (a pipe is FIFO), so what is still in the pipe is at most what was written
// after the end of the latest answered request. Inline writes keep that
// bound within the pipe's capacity in bytes (PipeCapacity) and, on Linux,
// in page slots too: there each write may take ceil(n/page) of the pipe's
// slots, however few bytes it carries, so the slots of every write not
// known to be read are counted.

// send writes msg, a whole line, to the backend's stdin, inline or through
// the writer goroutine; with batch, it may instead keep it until batch is
// flushed (Flush). end, if not nil, receives msg's end offset in the stream
// (for the bound above) before any byte of it is written. A message sent
// after shutdown is dropped. msg is not kept: it is copied or written
// before send returns, so its buffer may be reused then (sendRequest).
func (c *Conn) send(msg []byte, end *int64, batch *flush.Set) {
	c.wmu.Lock()
	if c.wclosed {
		c.wmu.Unlock()
		return
	}
	c.sent += int64(len(msg))
	if end != nil {
		*end = c.sent
	}
	switch {
	case len(c.held) > 0 || batch != nil && c.canWriteInline(len(msg)):
		// Behind what is held, in order: a cancellation never overtakes
		// its request.
		first := len(c.held) == 0
		if c.held == nil {
			c.held, c.spare = c.spare, nil
		}
		c.held = append(c.held, msg...)
		full := len(c.held) >= maxHeld
		c.wmu.Unlock()
		switch {
		case full:
			// A caller that keeps holding (an HTTP front under a
			// flood of POSTs) must not keep every call from its
			// backend.
			c.Flush()
		case first:
			// Marked once held: what is held from now on goes out
			// with this batch's flush.
			batch.Mark(c)
		}
	case c.canWriteInline(len(msg)):
		c.writeInline(msg)
	default:
		c.enqueue(msg)
		c.wmu.Unlock()
	}
}

// maxHeld is the most send holds back for Flush: a pipe's worth.
const maxHeld = 64 << 10

// sendReply sends a reply to one of the backend's own requests, unless more
// than maxReplyBacklog bytes already wait for a backend that reads nothing:
// then it is dropped, counted, and warned about once.
func (c *Conn) sendReply(msg []byte) {
	c.wmu.Lock()
	over := len(c.queue)+len(msg) > maxReplyBacklog
	if over {
		c.droppedReplies++
	}
	first := over && c.droppedReplies == 1
	c.wmu.Unlock()
	if over {
		if first {
			c.log.Warn("backend reads nothing while it sends requests; dropping replies to them", "backlog_limit", maxReplyBacklog)
		}
		return
	}
	c.send(msg, nil, nil)
}

// Flush writes what was held back, all in one write: the requests Start
// held (CallOptions.Batch) and every message sent after them, which waits
// behind them so as not to overtake them (a cancellation, a reply). It
// writes inline if that fits, else through the writer goroutine. The
// batch's flush.Set calls it; with nothing held it does nothing.
func (c *Conn) Flush() {
	c.wmu.Lock()
	if len(c.held) == 0 {
		c.wmu.Unlock()
		return
	}
	buf := c.held
	c.held = nil
	if c.canWriteInline(len(buf)) {
		c.writeInline(buf)
		c.wmu.Lock()
		if c.spare == nil && cap(buf) <= 64<<10 {
			c.spare = buf[:0] // the next burst reuses it
		}
		c.wmu.Unlock()
		return
	}
	c.enqueue(buf)
	c.spare = buf[:0] // copied into the queue
	c.wmu.Unlock()
}

// canWriteInline reports whether n more bytes, written at once after
// everything sent so far, surely fit in the pipe, with no other write under
// way or waiting. wmu is held.
func (c *Conn) canWriteInline(n int) bool {
	if c.writing || len(c.queue) > 0 || c.sent-c.consumed > c.pipeBytes {
		return false
	}
	if c.pipeSlots == 0 {
		return true
	}
	read := 0
	for read < len(c.writes) && c.writes[read].end <= c.consumed {
		c.slots -= c.writes[read].slots
		read++
	}
	if read > 0 {
		// Shift down rather than reslice, so the array is reused.
		c.writes = c.writes[:copy(c.writes, c.writes[read:])]
	}
	return c.slots+c.slotsOf(n) <= c.pipeSlots
}

// slotsOf is how many pipe slots a write of n bytes may take.
func (c *Conn) slotsOf(n int) int64 {
	return (int64(n) + c.pipePage - 1) / c.pipePage
}

// startWrite records a write of buf, the bytes sent last but those held,
// for the slot count; wmu is held.
func (c *Conn) startWrite(buf []byte) {
	c.writing = true
	if c.pipeSlots == 0 {
		return
	}
	w := pipeWrite{end: c.sent - int64(len(c.held)), slots: c.slotsOf(len(buf))}
	c.writes = append(c.writes, w)
	c.slots += w.slots
}

// pipeWrite is one write the backend may not have read yet.
type pipeWrite struct {
	end   int64 // its end offset in the stream
	slots int64 // the pipe slots it may take
}

// writeInline writes buf on the caller's goroutine; wmu is held on entry
// and released.
func (c *Conn) writeInline(buf []byte) {
	c.startWrite(buf)
	c.wmu.Unlock()
	c.writeFailed(c.writeAll(buf))
	c.wmu.Lock()
	c.doneWriting()
	c.wmu.Unlock()
}

// enqueue queues buf for the writer goroutine, starting it if need be; wmu
// is held.
func (c *Conn) enqueue(buf []byte) {
	c.queue = append(c.queue, buf...)
	if !c.writerUp {
		c.writerUp = true
		c.wg.Add(1) // under wmu, before shutdown sets wclosed and wait begins
		go c.writeLoop()
	}
	c.wakeWriter()
}

// doneWriting ends a write; wmu is held.
func (c *Conn) doneWriting() {
	c.writing = false
	if len(c.queue) > 0 {
		c.wakeWriter()
	}
}

// consumedUpTo records that the backend has read the stream up to *end
// (which send set under the same lock).
func (c *Conn) consumedUpTo(end *int64) {
	c.wmu.Lock()
	if *end > c.consumed {
		c.consumed = *end
	}
	c.wmu.Unlock()
}

func (c *Conn) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop is the writer goroutine: it writes what is queued, all at once,
// and may block as long as the backend does not read. It exits at shutdown
// (a blocked write returns when the owner closes the pipe).
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	var spare []byte
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		c.wmu.Lock()
		if c.writing || len(c.queue) == 0 {
			c.wmu.Unlock()
			continue
		}
		buf := c.queue
		c.queue, spare = spare[:0], nil
		c.startWrite(buf)
		c.wmu.Unlock()
		err := c.writeAll(buf)
		c.wmu.Lock()
		c.doneWriting()
		if cap(buf) <= 1<<20 {
			spare = buf // reuse, but don't pin a huge buffer
		}
		c.wmu.Unlock()
		c.writeFailed(err)
	}
}

// writeAll writes buf whole. Half a message on the wire would make the rest
// of the stream unparsable, so a short write closes the backend's stdin: it
// sees EOF and exits, and the calls in flight fail with its exit.
func (c *Conn) writeAll(buf []byte) error {
	n, err := c.w.Write(buf)
	if err != nil && n > 0 && n < len(buf) {
		c.log.Warn("write to backend stdin cut short; closing its stdin", "err", err)
		_ = c.w.Close()
	}
	return err
}

// writeFailed logs a failed write. The calls it concerned end when the
// backend's exit is seen (shutdown) or at their timeout.
func (c *Conn) writeFailed(err error) {
	if err == nil {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	if errors.Is(err, os.ErrClosed) {
		return
	}
	c.log.Debug("write to backend stdin failed", "err", err)
}

// PipeCap is the capacity of a backend's stdin pipe (PipeCapacity).
type PipeCap struct {
	bytes int64 // bytes it holds
	page  int64 // bytes per slot
	slots int64 // slots it has; 0: no slots to count
}

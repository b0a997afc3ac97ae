// Package stdio is the gateway's stdio transport: it splits the client's
// byte stream into messages (Framer) and writes whole replies framed the way
// the client frames its input (Conn). It knows nothing of JSON-RPC beyond
// where one message ends: decoding, routing and every error reply belong to
// the gateway's session, which other transports share.
package stdio

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/coalesce"
)

// DefaultMaxMessageBytes is the largest message a Conn accepts.
const DefaultMaxMessageBytes = 16 << 20

// Options configure a Conn.
type Options struct {
	// LineMode forces line-delimited replies (MCP_LINE_MODE=1); otherwise
	// replies follow the framing of the first message received.
	LineMode bool
	// MaxMessageBytes caps one message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	Logger          *slog.Logger
	// Describe, when set, gives the debug log's attributes of a message
	// (the gateway's: its method and id, never its params); the log
	// names only the direction and size of a message otherwise.
	Describe func(msg []byte) []any
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("stdio: connection closed")

// Conn is one client on a byte stream (the gateway's stdin and stdout). It
// accepts Content-Length framed messages and line-delimited JSON in any mix
// and any split across reads (see Framer). Replies are framed like the first
// input received (Content-Length framed or one line each) unless LineMode is
// set; anything written before any input arrives is line-delimited. Each
// reply is written whole, never interleaved with another.
//
// Conn does not close r or w.
type Conn struct {
	f        *Framer
	w        io.Writer
	lineMode bool
	log      *slog.Logger
	framing  atomic.Uint32 // Framing of the first input; replies follow it
	closed   atomic.Bool
	describe func(msg []byte) []any

	mu   sync.Mutex // held while messages are written to w
	pend []byte     // framed messages not written yet (Buffer), then the one being written
	// pendLatest counts the bytes of BufferLatest messages in pend; beyond
	// latestRoom they are kept per key instead (see BufferLatest).
	pendLatest int

	// latest holds what BufferLatest could not queue while another
	// goroutine held mu (a slow client): one framed message per key, the
	// latest. Whoever holds mu moves it into pend before its own message.
	latest coalesce.Latest
}

// maxPending bounds what Buffer holds before it writes anyway.
const maxPending = 64 << 10

// latestRoom is how many bytes of BufferLatest messages pend takes between
// two writes, in order and all of them; beyond it only the latest per key
// is kept.
const latestRoom = coalesce.Room

// New returns a Conn reading r and writing w.
func New(r io.Reader, w io.Writer, opts Options) *Conn {
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	describe := opts.Describe
	if describe == nil {
		describe = func([]byte) []any { return nil }
	}
	return &Conn{f: NewFramer(r, max, 0), w: w, lineMode: opts.LineMode, log: log, describe: describe}
}

// Read returns the next message's bytes (owned by the caller), or, for a
// piece of input that is not one (bad framing, over the size limit), why.
// err is non-nil only at the end of input (io.EOF) or when r failed. Read
// must be called from one goroutine at a time.
//
// Before each read of r, which may wait for input, Read calls wait (when
// not nil): a caller that holds writes back while whole messages are
// buffered sends them then. Buffered blank lines or part of a message do
// not count as buffered input.
func (c *Conn) Read(wait func()) (msg []byte, bad string, err error) {
	c.f.wait = wait
	fr, err := c.f.Next()
	if err != nil {
		return nil, "", err
	}
	c.framing.CompareAndSwap(uint32(FramingNone), uint32(fr.Framing))
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.logMessage("recv", fr.Body, fr.Size, "framing", fr.Framing)
	}
	return fr.Body, fr.Bad, nil
}

// Write writes one message (without terminator or header) whole, after
// any messages Buffer holds. It is safe for concurrent use; after Close it
// fails with ErrClosed.
func (c *Conn) Write(msg []byte) error { return c.put(true, msg) }

// WriteParts is Write of the message the parts make one after the other. A
// large message is written from the parts as they are, never joined into
// one buffer: a 50 MiB result then costs no copy.
func (c *Conn) WriteParts(parts ...[]byte) error { return c.put(true, parts...) }

// Buffer queues one message to go out with the next Write or Flush, so that
// a burst of replies takes one write. The caller must see that Flush
// follows.
func (c *Conn) Buffer(msg []byte) error { return c.put(false, msg) }

// Flush writes the messages Buffer holds.
func (c *Conn) Flush() error { return c.put(true) }

// BufferLatest is Buffer for a message that a later one of the same key
// makes obsolete (progress of one call), so that a client that reads
// slowly is not flooded: it never writes and never waits. Up to latestRoom
// bytes of them go out in order with the next write, all of them; beyond
// that, and whenever another goroutine holds the connection (it is writing
// to a client that has not read the last write yet), only the latest
// message per key is kept, to go out ahead of the next message queued after
// it. So a flood of them costs one message per key, and the goroutine that
// produces them (a backend's read loop) is not held up by them. As with
// Buffer, the caller must see that Flush follows.
func (c *Conn) BufferLatest(key string, msg []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.logMessage("send", msg, len(msg))
	}
	if c.mu.TryLock() {
		if c.pendLatest+len(msg) <= latestRoom && len(c.pend) < maxPending {
			c.takeLatest() // older ones of the same key first
			n := len(c.pend)
			c.pend = c.frame(c.pend, msg)
			c.pendLatest += len(c.pend) - n
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
	}
	c.latest.Put(key, c.frame(nil, msg))
	return nil
}

// put adds the message made of parts (none: no message) to what is
// pending, after what BufferLatest held, and writes it all when flush is
// set or enough is pending. A message over maxPending that is flushed is
// written from its parts, after what is pending, without being copied:
// other writers wait on c.mu, so it is still never interleaved with another.
func (c *Conn) put(flush bool, parts ...[]byte) error {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if len(parts) > 0 && c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.logMessage("send", parts[0], size) // the first part starts the message
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready() {
		return ErrClosed
	}
	header := c.headerFramed()
	direct := flush && size > maxPending
	switch {
	case direct:
		c.pend = appendHead(c.pend, header, size)
	case len(parts) > 0:
		c.pend = appendFramed(c.pend, header, size, parts)
	}
	if !direct && (len(c.pend) == 0 || !flush && len(c.pend) < maxPending) {
		return nil
	}
	if !direct {
		parts = nil
	}
	return c.writeLocked(parts, size, header)
}

// BufferAppend is Buffer of the message add appends to the buffer it is
// given (one whole message, without terminator or header, and nothing
// else), so that a message made for the burst is made where it is held
// instead of being made and then copied. add runs with the connection
// held: it must not call back into c.
func (c *Conn) BufferAppend(add func(buf []byte) []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready() {
		return ErrClosed
	}
	start := len(c.pend)
	var msg []byte
	if c.headerFramed() {
		msg = add(nil) // its size goes before it
		c.pend = appendFramed(c.pend, true, len(msg), [][]byte{msg})
	} else {
		c.pend = add(c.pend)
		msg = c.pend[start:]
		c.pend = append(c.pend, '\n')
	}
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.logMessage("send", msg, len(msg))
	}
	if len(c.pend) < maxPending {
		return nil
	}
	return c.writeLocked(nil, 0, false)
}

// writeLocked writes what is pending, then, if direct is not nil, the
// size-byte message it makes (its header is pending already) and its line
// end (when not header framed); c.mu is held.
func (c *Conn) writeLocked(direct [][]byte, size int, header bool) error {
	n := len(c.pend)
	var err error
	if n > 0 {
		_, err = c.w.Write(c.pend)
	}
	if direct != nil {
		for _, p := range direct {
			if err == nil {
				_, err = c.w.Write(p)
			}
		}
		n += size
		if err == nil && !header {
			_, err = c.w.Write(newline)
			n++
		}
	}
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("stdio: write", "bytes", n)
	}
	if cap(c.pend) <= 1<<20 {
		c.pend = c.pend[:0] // reuse, but don't pin a huge buffer
	} else {
		c.pend = nil
	}
	c.pendLatest = 0
	return err
}

var newline = []byte{'\n'}

// logMessage writes the debug record of one message: its direction, what
// Describe says of it, its size.
func (c *Conn) logMessage(dir string, msg []byte, size int, attrs ...any) {
	args := append([]any{"dir", dir}, c.describe(msg)...)
	c.log.Debug("stdio: message", append(append(args, attrs...), "bytes", size)...)
}

// ready readies pend for a message, mu held: what BufferLatest held goes
// in first. It is false after Close, and what is pending is dropped.
func (c *Conn) ready() bool {
	if c.closed.Load() {
		c.pend, c.pendLatest = c.pend[:0], 0
		return false
	}
	c.takeLatest()
	return true
}

// takeLatest moves what BufferLatest held into pend; mu is held.
func (c *Conn) takeLatest() {
	c.latest.Take(func(msg []byte) { c.pend = append(c.pend, msg...) })
}

// headerFramed reports whether replies are Content-Length framed (else one
// line each): read once per message, since the first input may set it
// while a reply is being framed.
func (c *Conn) headerFramed() bool {
	return !c.lineMode && Framing(c.framing.Load()) == FramingHeader
}

// frame appends msg to buf, framed as the client frames its input.
func (c *Conn) frame(buf, msg []byte) []byte {
	return appendFramed(buf, c.headerFramed(), len(msg), [][]byte{msg})
}

// appendFramed appends the message made of parts, size bytes in all, with
// its header (header) or its line end.
func appendFramed(buf []byte, header bool, size int, parts [][]byte) []byte {
	buf = appendHead(buf, header, size)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	if !header {
		buf = append(buf, '\n')
	}
	return buf
}

// appendHead appends the Content-Length header of a size-byte message, if
// header.
func appendHead(buf []byte, header bool, size int) []byte {
	if !header {
		return buf
	}
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(size), 10)
	return append(buf, "\r\n\r\n"...)
}

// Close makes later Writes fail. It does not close r or w; a Read in
// progress returns when r does.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return nil
}

// WriterGone reports whether nobody reads the output any more (the client
// closed its end of the pipe), without writing to it. False when it cannot
// tell.
func (c *Conn) WriterGone() bool { return writerGone(c.w) }

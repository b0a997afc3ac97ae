package rpcconn

import (
	"runtime/debug"
)

// longLine assembles a line longer than the read buffer (a large tool
// result) from the pieces the buffer holds one after the other.
//
// Appending the pieces to one growing slice would leave every smaller copy
// behind as garbage, several times the line's size in all before the
// collector runs: the pieces are kept instead, and joined once into a
// slice of the exact size. Lines up to keepLongLine reuse one buffer; a
// larger one is dropped after use, and after one of at least freeAfterLine
// the memory is handed back to the OS at once (the collector alone would
// keep it until the heap grows again).
type longLine struct {
	small  []byte   // the pieces while they are few, reused across lines
	pieces [][]byte // then each piece, copied
	n      int      // bytes so far
	big    bool     // the line outgrew small
}

const (
	keepLongLine  = 1 << 20
	freeAfterLine = 16 << 20
)

// add keeps a copy of a piece of the line.
func (l *longLine) add(frag []byte) {
	l.n += len(frag)
	if !l.big && l.n <= keepLongLine {
		l.small = append(l.small, frag...)
		return
	}
	if !l.big {
		l.big = true
		l.pieces = append(l.pieces, l.small)
		l.small = nil
	}
	l.pieces = append(l.pieces, append([]byte(nil), frag...))
}

// len reports the bytes added so far.
func (l *longLine) len() int { return l.n }

// line returns the whole line: what add kept, then last (the final piece,
// which line copies). It is valid until reset.
func (l *longLine) line(last []byte) []byte {
	if !l.big {
		l.small = append(l.small, last...)
		return l.small
	}
	out := make([]byte, 0, l.n+len(last))
	for i, p := range l.pieces {
		out = append(out, p...)
		l.pieces[i] = nil // each piece is garbage once copied
	}
	l.pieces = l.pieces[:0]
	l.small = append(out, last...)
	return l.small
}

// reset forgets the line, keeping a small buffer for the next one.
func (l *longLine) reset() {
	if l.big || cap(l.small) > keepLongLine {
		huge := l.n >= freeAfterLine
		l.small, l.pieces, l.big = nil, nil, false
		if huge {
			debug.FreeOSMemory()
		}
	} else {
		l.small = l.small[:0]
	}
	l.n = 0
}

package rpcconn

import (
	"bytes"
	"testing"
)

// longLine gives back exactly the pieces added, for lines that stay in the
// reused buffer and for those that outgrow it, one after the other.
func TestLongLine(t *testing.T) {
	var l longLine
	for _, size := range []int{100, keepLongLine + 5000, 3000, 3 * keepLongLine} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		const piece = 64 << 10
		rest := want
		for len(rest) > piece {
			l.add(rest[:piece])
			rest = rest[piece:]
		}
		if got := l.line(rest); !bytes.Equal(got, want) {
			t.Fatalf("line of %d bytes: got %d bytes, not the same", size, len(got))
		}
		l.reset()
		if l.len() != 0 || len(l.pieces) != 0 || cap(l.small) > keepLongLine {
			t.Fatalf("after a line of %d bytes, reset kept %d bytes, %d pieces, a buffer of %d", size, l.len(), len(l.pieces), cap(l.small))
		}
	}
}

//go:build unix

package stdio

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writerGone reports whether w is a pipe or socket whose reading end is
// closed: poll reports POLLERR or POLLHUP on it without a write (which
// would fail with EPIPE).
func writerGone(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			gone = fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
		}
	})
	return gone
}

package backends

import (
	"os"
	"syscall"
)

// fGetPipeSz is F_GETPIPE_SZ (linux/fcntl.h).
const fGetPipeSz = 1032

// pipeCapacity returns the unit and capacity of the pipe w writes to. A
// Linux pipe is a ring of page-sized slots, and a write takes up to
// ceil(n/page) of them, so the unit is a page and the capacity the number
// of slots, from the size the kernel reports (the least, one page, if it
// cannot be read).
func pipeCapacity(w *os.File) (unit, capacity int64) {
	page := int64(os.Getpagesize())
	size := page
	if rc, err := w.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
			if errno == 0 && int64(n) > size {
				size = int64(n)
			}
		})
	}
	return page, size / page
}

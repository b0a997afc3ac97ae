package rpcconn

import (
	"os"
	"syscall"
)

// fGetPipeSz is F_GETPIPE_SZ (linux/fcntl.h).
const fGetPipeSz = 1032

// PipeCapacity returns the capacity of the pipe w writes to. A Linux pipe
// is a ring of page-sized slots, and a write takes up to ceil(n/page) of
// them, so slots are counted too; the size is what the kernel reports (the
// least, one page, if it cannot be read).
func PipeCapacity(w *os.File) PipeCap {
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
	return PipeCap{bytes: size, page: page, slots: size / page}
}

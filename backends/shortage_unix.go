//go:build unix

package backends

import "syscall"

// shortageErrnos: EMFILE and ENFILE from pipe2, open and accept; ENOMEM
// and EAGAIN (the process limit) from fork.
var shortageErrnos = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EAGAIN}

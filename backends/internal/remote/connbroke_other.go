//go:build !windows

package remote

import "syscall"

// brokenErrnos say that a connection was cut after it was made
// (connectionBroke).
var brokenErrnos = []syscall.Errno{syscall.ECONNRESET, syscall.EPIPE}

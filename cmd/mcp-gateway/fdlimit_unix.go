//go:build unix

package main

import "syscall"

// openFileLimit is the number of file descriptors the gateway may open
// (RLIMIT_NOFILE's soft limit, which Go raises to the hard one at start),
// or 0 when it is unknown or unlimited.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur >= 1<<31 {
		return 0
	}
	return uint64(l.Cur)
}

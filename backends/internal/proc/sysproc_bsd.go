//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in its own process group. There is no
// Pdeathsig outside Linux: the reaper (and the child's stdin reaching EOF)
// end the group when the gateway dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

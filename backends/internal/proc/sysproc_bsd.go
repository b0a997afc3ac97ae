//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in its own process group. There is no
// Pdeathsig outside Linux: the reaper (and the child's stdin reaching EOF)
// end the group when the gateway dies.
// There are no network namespaces either: netns is ignored.
func sysProcAttr(_, _ bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

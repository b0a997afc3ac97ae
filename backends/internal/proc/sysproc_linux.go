package proc

import "syscall"

// sysProcAttr puts the child in its own process group, and has the kernel
// SIGKILL it if the gateway's thread that started it dies (Pdeathsig): a
// hard kill of the gateway takes the direct child even before the reaper
// acts. The child's own children are covered by the group kill on stop and
// by the reaper.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

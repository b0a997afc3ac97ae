package proc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group, and has the kernel
// SIGKILL it if the gateway's thread that started it dies (Pdeathsig): a
// hard kill of the gateway takes the direct child even before the reaper
// acts. The child's own children are covered by the group kill on stop and
// by the reaper.
//
// With netns the child gets a new user namespace, mapping only the
// gateway's own user and group (so no privilege beyond them), and a new
// network namespace owned by it, whose loopback is down. With userns
// alone, the user namespace only.
func sysProcAttr(netns, userns bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if netns || userns {
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags = syscall.CLONE_NEWUSER
		if netns {
			a.Cloneflags |= syscall.CLONE_NEWNET
		}
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

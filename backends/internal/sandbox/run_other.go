//go:build !linux

package sandbox

// KernelABI is 0: Landlock is Linux's.
func KernelABI() int { return 0 }

// CgroupV2 is false: cgroups are Linux's.
func CgroupV2() bool { return false }

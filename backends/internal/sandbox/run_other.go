//go:build !linux

package sandbox

// KernelABI is 0: Landlock is Linux's.
func KernelABI() int { return 0 }

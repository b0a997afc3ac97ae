//go:build !linux

package sandbox

// KernelABI is 0: Landlock is Linux's.
func KernelABI() int { return 0 }

// Run fails: no sandbox mode on this OS yet.
func Run(string) error { return ErrUnsupported }

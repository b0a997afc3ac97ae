//go:build !linux && !darwin

package sandbox

// Run fails: no sandbox mode on this OS: Windows bounds a server through
// its Job Object, started by the gateway itself (Prepare never asks for
// the sandbox mode there).
func Run(string) error { return ErrUnsupported }

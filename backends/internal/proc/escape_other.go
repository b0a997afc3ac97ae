//go:build !linux

package proc

import "os"

// BecomeSubreaper is Linux only; elsewhere it does nothing. On Windows a
// process cannot leave its Job Object; on macOS a descendant that left its
// process group is out of reach (docs/platforms.md).
func BecomeSubreaper() error { return nil }

func pipeInodes(...*os.File) []uint64 { return nil }

// KillEscaped is Linux only (it finds holders of the child's pipes in
// /proc); elsewhere it kills nothing.
func (p *Process) KillEscaped() int { return 0 }

// EndOrphans is Linux only; elsewhere it ends nothing.
func EndOrphans(...int) int { return 0 }

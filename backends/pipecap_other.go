//go:build !linux

package backends

import "os"

// pipeCapacity returns the unit and capacity assumed for the pipe w writes
// to: bytes, and 4 KiB, which pipes have at least on the other systems the
// gateway supports (macOS pipes start at 16 KiB, Windows anonymous pipes
// at 4 KiB).
func pipeCapacity(*os.File) (unit, capacity int64) { return 1, 4 << 10 }

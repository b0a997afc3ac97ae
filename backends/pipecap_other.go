//go:build !linux

package backends

import "os"

// pipeCapacity returns the capacity assumed for the pipe w writes to: 4 KiB,
// which pipes have at least on the other systems the gateway supports
// (macOS pipes start at 16 KiB, Windows anonymous pipes at 4 KiB), counted
// in bytes only.
func pipeCapacity(*os.File) pipeCap { return pipeCap{bytes: 4 << 10, page: 1} }

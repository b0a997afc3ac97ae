//go:build !linux

package rpcconn

import "os"

// PipeCapacity returns the capacity assumed for the pipe w writes to: 4 KiB,
// which pipes have at least on the other systems the gateway supports
// (macOS pipes start at 16 KiB, Windows anonymous pipes at 4 KiB), counted
// in bytes only.
func PipeCapacity(*os.File) PipeCap { return PipeCap{bytes: 4 << 10, page: 1} }

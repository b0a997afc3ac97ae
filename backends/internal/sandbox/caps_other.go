//go:build !linux && !darwin && !windows

package sandbox

import "runtime"

// hostCaps: nothing is confined on this OS yet.
func hostCaps(Host) caps {
	why := "not yet on " + runtime.GOOS
	return caps{fs: why, netNone: why, netList: why, memory: why, processes: why}
}

// finish has nothing to add: nothing is applied.
func finish(*Plan, *Applied, Host, []string, uint16) {}

// systemDirs and devices are not used: files are not confined.
var systemDirs, devices []string

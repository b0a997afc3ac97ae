//go:build linux || darwin

package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setLimits sets the sandbox process's rlimits, which the server
// inherits: no core dumps (its memory may hold secrets), and p.NoFile
// open files, within the hard limit it has.
func setLimits(p Plan) error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("sandbox: core size: %w", err)
	}
	if p.NoFile > 0 {
		var r unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err == nil {
			r.Cur, r.Max = min(p.NoFile, r.Max), min(p.NoFile, r.Max)
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
				return fmt.Errorf("sandbox: open files: %w", err)
			}
		}
	}
	return nil
}

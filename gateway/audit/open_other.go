//go:build !windows

package audit

import "os"

// openAppend opens path for appending, creating it (mode 0600) if need be.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

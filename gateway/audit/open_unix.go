//go:build unix

package audit

import (
	"os"
	"syscall"
)

// openAppend opens path for appending, creating it (mode 0600) if need be.
// A symbolic link is not followed (O_NOFOLLOW): the open fails.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}

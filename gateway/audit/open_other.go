//go:build !unix && !windows

package audit

import (
	"io/fs"
	"os"
)

// openAppend opens path for appending, creating it (mode 0600) if need be,
// unless it is a symbolic link. Without O_NOFOLLOW the check comes first.
func openAppend(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

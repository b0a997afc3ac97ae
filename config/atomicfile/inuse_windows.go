package atomicfile

import (
	"errors"

	"golang.org/x/sys/windows"
)

// inUse reports whether err says another process has the file open: what
// passes once it closes it.
func inUse(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

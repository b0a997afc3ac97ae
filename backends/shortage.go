package backends

import (
	"errors"
	"syscall"
)

// ResourceShortage reports whether err is the gateway's own lack of a
// system resource — file descriptors, memory, processes — rather than
// anything a backend or a file did wrong: what failed may succeed once the
// resource is back. A backend whose start fails so is retried without the
// failure counting as one of its crashes (run), and a reload whose read
// failed so is tried again.
func ResourceShortage(err error) bool {
	if err == nil {
		return false
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	for _, e := range shortageErrnos {
		if errno == e {
			return true
		}
	}
	return false
}

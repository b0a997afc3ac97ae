package backends

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// shortageErrnos: out of handles, memory or system resources, from
// CreatePipe and CreateProcess.
var shortageErrnos = []syscall.Errno{
	windows.ERROR_TOO_MANY_OPEN_FILES, windows.ERROR_NOT_ENOUGH_MEMORY, windows.ERROR_OUTOFMEMORY,
	windows.ERROR_NO_SYSTEM_RESOURCES, windows.ERROR_COMMITMENT_LIMIT,
}

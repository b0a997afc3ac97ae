package remote

import "syscall"

// brokenErrnos say that a connection was cut after it was made
// (connectionBroke): Winsock's reset and abort.
var brokenErrnos = []syscall.Errno{syscall.WSAECONNRESET, syscall.WSAECONNABORTED}

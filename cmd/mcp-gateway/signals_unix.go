//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// stopSignals end the gateway gracefully: the client's session is ended
// and every backend is stopped the polite way (stdin EOF, then SIGTERM,
// then the group kill), never abruptly.
//
// SIGHUP is here — the one place for it: a client's terminal or session
// went away, and a stateful backend must get its chance to save. (If
// SIGHUP comes to reload the configuration, it stays graceful.)
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ignoreSIGPIPE makes a write to a closed stdout fail with EPIPE instead of
// killing the gateway (Go's default for fd 1 and 2): a client that closed
// its end is gone, and the session ends gracefully (gateway: a failed write
// ends the session).
func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }

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
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// statsSignals make a serving gateway log its runtime figures
// (runtimestats.go) instead of dying, SIGUSR1's default action.
var statsSignals = []os.Signal{syscall.SIGUSR1}

// holdSIGHUP keeps SIGHUP from killing the gateway (its default action),
// which would SIGKILL every backend without a chance to save: while
// serving, reload.go reloads the configuration on it; otherwise (status,
// tools, call, and before serving starts) it is ignored. A channel that is
// never read keeps Go's handler installed for the life of the process.
func holdSIGHUP() { signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP) }

// ignoreSIGPIPE makes a write to a closed stdout fail with EPIPE instead of
// killing the gateway (Go's default for fd 1 and 2): a client that closed
// its end is gone, and the session ends gracefully (gateway: a failed write
// ends the session).
func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }

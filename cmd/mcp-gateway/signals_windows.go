package main

import (
	"os"
	"syscall"
)

// stopSignals end the gateway gracefully (see signals_unix.go); Windows
// delivers Ctrl-C and Ctrl-Break as os.Interrupt and a console close as
// SIGTERM.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// statsSignals: Windows has no SIGUSR1; runtime figures are not offered.
var statsSignals []os.Signal

// holdSIGHUP: Windows has no SIGHUP.
func holdSIGHUP() {}

// ignoreSIGPIPE: Windows has no SIGPIPE; a write to a closed pipe fails.
func ignoreSIGPIPE() {}

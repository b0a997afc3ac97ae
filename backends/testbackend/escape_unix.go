//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// startEscapee starts "sleep 300" in a new session (setsid: out of our
// process group) holding our stdout and stderr, and returns its pid.
func startEscapee() (int, error) {
	cmd := exec.Command("sleep", "300")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

//go:build unix && !linux

package testutil

import (
	"os/exec"
	"strconv"
	"strings"
)

// Alive reports whether pid is a live process (not a zombie), from ps.
func Alive(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	st := strings.TrimSpace(string(out))
	return err == nil && st != "" && !strings.HasPrefix(st, "Z")
}

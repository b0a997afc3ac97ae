package proc_test

import (
	"os"
	"strconv"
	"strings"
)

// alive reports whether pid is a live process (not a zombie), from
// /proc/PID/stat.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z"
}

package testutil

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The process table as Linux's /proc shows it. Elsewhere there is no
// /proc: ReadProc finds nothing and StatusKB fails.

// Proc is a process as /proc shows it.
type Proc struct {
	PID, PPID, PGID int
	State           byte   // 'R', 'S', 'Z', ...
	Start           string // start time: tells a reused pid apart
	Cmdline         string // arguments joined by spaces
}

// ReadProc reads /proc/PID; false if there is no such process.
func ReadProc(pid int) (Proc, bool) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 20 {
		return Proc{}, false
	}
	p := Proc{PID: pid, State: f[0][0], Start: f[19]}
	p.PPID, _ = strconv.Atoi(f[1])
	p.PGID, _ = strconv.Atoi(f[2])
	c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
	return p, true
}

// Exists reports whether the same process is still in the process table (a
// zombie counts).
func (p Proc) Exists() bool {
	q, ok := ReadProc(p.PID)
	return ok && q.Start == p.Start
}

// Alive reports whether the same process exists and is not a zombie.
func (p Proc) Alive() bool { return p.Exists() && Alive(p.PID) }

func (p Proc) String() string { return fmt.Sprintf("%d (%s)", p.PID, p.Cmdline) }

// Procs returns every process.
func Procs() []Proc {
	ents, _ := os.ReadDir("/proc")
	var out []Proc
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := ReadProc(pid); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// Descendants returns every live process below root, nearest first.
func Descendants(root int) []Proc {
	all, out := Procs(), []Proc{{PID: root}}
	for i := 0; i < len(out); i++ {
		for _, p := range all {
			if p.PPID == out[i].PID && p.State != 'Z' {
				out = append(out, p)
			}
		}
	}
	return out[1:]
}

// StatusKB returns fields of /proc/PID/status that are in kB (VmRSS,
// VmHWM, RssAnon), by name; an error if one is missing.
func StatusKB(pid int, fields ...string) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, _ := strings.Cut(line, ":")
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64); err == nil {
			out[key] = n
		}
	}
	for _, f := range fields {
		if _, ok := out[f]; !ok && err == nil {
			err = fmt.Errorf("no %s in /proc/%d/status", f, pid)
		}
	}
	return out, err
}

// CPUTime returns the CPU time pid has used so far, summed over its
// threads from /proc/PID/task/*/schedstat (nanoseconds, unlike the clock
// ticks of /proc/PID/stat); false where there is no such directory.
func CPUTime(pid int) (time.Duration, bool) {
	dir := fmt.Sprintf("/proc/%d/task/", pid)
	tasks, err := os.ReadDir(dir)
	var sum time.Duration
	for _, t := range tasks {
		var ns int64
		b, _ := os.ReadFile(dir + t.Name() + "/schedstat") // none if the thread ended
		fmt.Sscan(string(b), &ns)
		sum += time.Duration(ns)
	}
	return sum, err == nil
}

package testutil

import (
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return Proc{}, false
	}
	p := Proc{PID: pid, State: f[0][0], Start: f[19]}
	p.PPID, _ = strconv.Atoi(f[1])
	p.PGID, _ = strconv.Atoi(f[2])
	if c, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
	}
	return p, true
}

// Exists reports whether the same process is still in the process table (a
// zombie counts).
func (p Proc) Exists() bool {
	q, ok := ReadProc(p.PID)
	return ok && q.Start == p.Start
}

// Alive reports whether the same process exists and is not a zombie.
func (p Proc) Alive() bool {
	q, ok := ReadProc(p.PID)
	return ok && q.Start == p.Start && q.State != 'Z'
}

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
	children := map[int][]Proc{}
	for _, p := range Procs() {
		if p.State != 'Z' {
			children[p.PPID] = append(children[p.PPID], p)
		}
	}
	var out []Proc
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out
}

// StatusKB returns fields of /proc/PID/status that are in kB (VmRSS,
// VmHWM, RssAnon), by name; an error if one is missing.
func StatusKB(pid int, fields ...string) (map[string]int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err == nil {
			out[key] = n
		}
	}
	for _, f := range fields {
		if _, ok := out[f]; !ok {
			return nil, fmt.Errorf("no %s in /proc/%d/status", f, pid)
		}
	}
	return out, nil
}

// CPUTime returns the CPU time pid has used so far, summed over its
// threads from /proc/PID/task/*/schedstat (nanoseconds, unlike the clock
// ticks of /proc/PID/stat); false where there is no such file.
func CPUTime(pid int) (time.Duration, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += time.Duration(ns)
	}
	return sum, true
}

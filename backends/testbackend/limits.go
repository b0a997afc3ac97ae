package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
)

// limitTools are what a hostile server does to the machine's resources
// (-hostile): fork (max: how many at most) starts child processes that
// sleep until it has started max or the OS refuses one, then ends them and
// answers how many it started and the OS's error; alloc (mb) allocates mb
// MB, touches every page and answers "allocated N MB".
var limitTools = []string{"fork", "alloc"}

// limitCall runs one of limitTools with its argument (max, mb).
func limitCall(name, arg string) string {
	n, err := strconv.Atoi(arg)
	if err != nil || n <= 0 {
		return `{"content":[{"type":"text","text":"a positive number is needed"}],"isError":true}`
	}
	switch name {
	case "fork":
		started, err := forkLoop(n)
		if err != nil {
			return `{"content":[{"type":"text","text":` + quote(fmt.Sprintf("started %d processes, then: %v", started, err)) + `}],"isError":true}`
		}
		return text(fmt.Sprintf("started %d processes", started))
	case "alloc":
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		runtime.KeepAlive(b)
		b = nil
		debug.FreeOSMemory()
		return text(fmt.Sprintf("allocated %d MB", n))
	}
	return text("")
}

// forkLoop starts up to max sleeping children, stopping at the first the
// OS refuses, and ends them all.
func forkLoop(max int) (int, error) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return 0, err
	}
	spareThreads(8)
	var kids []*exec.Cmd
	defer func() {
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for len(kids) < max {
		c := exec.Command(sleep, "3600")
		if err := c.Start(); err != nil {
			return len(kids), err
		}
		kids = append(kids, c)
	}
	return len(kids), nil
}

// spareThreads leaves n idle OS threads to the Go runtime: at a process
// limit it could make none, and a runtime that fails to make a thread
// it needs dies.
func spareThreads(n int) {
	var locked, wg sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // each on a thread of its own at once
			locked.Done()
			<-release
			runtime.UnlockOSThread() // the thread goes back to the idle pool
		}()
	}
	locked.Wait()
	close(release)
	wg.Wait()
}

// Package proc starts backend processes and ends them, with their own
// children, on every supported OS (see docs/platforms.md):
//
//   - Linux: a process group per child, Pdeathsig, and the reaper process
//     that kills registered groups when the gateway dies.
//   - macOS and other Unix: a process group per child and the reaper.
//   - Windows: a Job Object per child that kills everything in it when the
//     gateway's handle closes, including when the gateway is killed.
package proc

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Spec is what to run.
type Spec struct {
	Command string
	Args    []string
	Env     []string // the child's whole environment
	Dir     string   // "" means the gateway's working directory
	// NetNS starts the child in a new user and network namespace (Linux;
	// ignored elsewhere), where no interface is up: no connection at all,
	// UDP included. Start fails if the OS does not allow it.
	NetNS bool
	// UserNS starts the child in a new user namespace only (Linux;
	// ignored elsewhere), mapping only the gateway's user and group: the
	// child may make a mount namespace there. NetNS has one already.
	// Start fails if the OS does not allow it.
	UserNS bool
	// MemoryMB and Processes bound the child and everything it starts
	// (Windows: its Job Object's JOB_OBJECT_LIMIT_JOB_MEMORY, committed
	// memory, and JOB_OBJECT_LIMIT_ACTIVE_PROCESS; ignored elsewhere). 0
	// is no limit. At the memory limit an allocation fails, and the
	// runtime usually ends the process: MemoryLimitHit says so.
	MemoryMB  int
	Processes int
}

// Process is one running child together with everything it starts (its
// process group, or its Job Object), with our ends of its three pipes. A
// goroutine reaps it (cmd.Wait) as soon as it exits and then closes Exited.
type Process struct {
	Pid    int
	Stdin  *os.File // write end of the child's stdin
	Stdout *os.File // read end of the child's stdout
	Stderr *os.File // read end of the child's stderr

	cmd     *exec.Cmd
	group   group // the OS's handle on the child and its descendants
	exited  chan struct{}
	waitErr error // valid once exited is closed
	release sync.Once
	pipes   []uint64 // the pipes' inodes (Linux), for KillEscaped
}

// Start starts s with its own group (process group or Job Object), wired
// to three pipes.
func Start(s Spec) (p *Process, err error) {
	cmd, err := command(s.Command, s.Args, s.Dir)
	if err != nil {
		return nil, err
	}
	cmd.Env = s.Env
	cmd.Dir = s.Dir

	var files []*os.File // every pipe end, closed on failure
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	g, err := start(cmd, s)
	if err != nil {
		return nil, err
	}
	// The child has its own copies; ours would keep EOF from ever coming.
	inR.Close()
	outW.Close()
	errW.Close()
	p = &Process{
		Pid:    cmd.Process.Pid,
		Stdin:  inW,
		Stdout: outR,
		Stderr: errR,
		cmd:    cmd,
		group:  g,
		exited: make(chan struct{}),
		pipes:  pipeInodes(inW, outR, errR),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the child itself has exited and been reaped (its
// descendants may live on until Stop or Kill).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitReason describes how the child ended: "exit status 3",
// "signal: killed". Valid once Exited is closed.
func (p *Process) ExitReason() string {
	if p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exited"
}

// Killed reports whether the child was ended by SIGKILL (on Windows,
// never). Valid once Exited is closed.
func (p *Process) Killed() bool {
	if p.cmd.ProcessState == nil {
		return false
	}
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// gone reports whether the child has been reaped and nothing is left in
// its group.
func (p *Process) gone() bool {
	select {
	case <-p.exited:
	default:
		return false
	}
	return p.group.empty()
}

// waitGone polls gone for up to d.
func (p *Process) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if p.gone() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		select {
		case <-p.exited:
			// The leader is gone; members may linger: poll.
			time.Sleep(min(step, left))
			step = min(2*step, 50*time.Millisecond)
		case <-time.After(min(left, 50*time.Millisecond)):
		}
	}
}

// StdinGrace bounds the wait after closing a child's stdin. A server that
// exits on EOF does so within milliseconds; many Node servers keep timers
// alive and never do, and every shutdown (and every `mcp-gateway status`)
// would pay the full grace for them.
const StdinGrace = 500 * time.Millisecond

// Stop ends the child and its group politely and then less so: close
// stdin and wait up to min(grace, StdinGrace), then the OS's terminate
// step (Unix: SIGTERM the group, wait up to grace, SIGKILL the group;
// Windows: terminate the Job Object). It returns once the child has been
// reaped and the group is dead.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Stdin.Close()
	if !p.waitGone(min(grace, StdinGrace)) {
		p.group.terminate(func() bool { return p.waitGone(grace) })
	}
	<-p.exited
	p.release.Do(p.group.close)
}

// Kill kills whatever is left of the group (after the child died, its
// descendants) and waits for the child to be reaped.
func (p *Process) Kill() {
	p.group.kill()
	<-p.exited
	p.release.Do(p.group.close)
}

// MemoryLimitHit reports whether the child's group reached its memory
// limit (Spec.MemoryMB) at any time: an allocation was refused, which is
// why a runtime that cannot allocate ends. Meaningful once Exited is
// closed; always false where the OS applies no limit (Unix).
func (p *Process) MemoryLimitHit() bool { return p.group.memoryLimitHit() }

// CloseFiles closes our ends of the pipes; blocked reads return.
func (p *Process) CloseFiles() {
	p.Stdin.Close()
	p.Stdout.Close()
	p.Stderr.Close()
}

package backends

import (
	"errors"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// process is one running child: its own process group (pgid == pid), with
// our ends of its three pipes. A goroutine reaps it (cmd.Wait) as soon as it
// exits and then closes exited.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // write end of the child's stdin
	stdout *os.File // read end of the child's stdout
	stderr *os.File // read end of the child's stderr

	exited  chan struct{}
	waitErr error // valid once exited is closed
}

// startProcess starts s.Command in its own process group with environ plus
// s.Env, in s.Cwd. The child is killed by the kernel if the gateway's thread
// that started it dies (Pdeathsig); its own children are covered by the
// group kill on stop and by the reaper.
func startProcess(s config.Server, environ []string) (p *process, err error) {
	cmd := exec.Command(s.Command, s.Args...)
	env := make([]string, 0, len(environ)+len(s.Env))
	env = append(env, environ...)
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k]) // exec dedups: the last value wins
	}
	cmd.Env = env
	cmd.Dir = s.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

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
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The child has its own copies; ours would keep EOF from ever coming.
	inR.Close()
	outW.Close()
	errW.Close()
	p = &process{
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		stdin:  inW,
		stdout: outR,
		stderr: errR,
		exited: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// exitReason describes how the process ended: "exit status 3",
// "signal: killed". Valid once exited is closed.
func (p *process) exitReason() string {
	if p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exited"
}

// signalGroup sends sig to the child's whole process group.
func (p *process) signalGroup(sig syscall.Signal) {
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Signal(sig) // fall back to the direct child
	}
}

// groupGone reports whether the child has been reaped and no process is left
// in its group.
func (p *process) groupGone() bool {
	select {
	case <-p.exited:
	default:
		return false
	}
	return errors.Is(syscall.Kill(-p.pid, 0), syscall.ESRCH)
}

// waitGone polls groupGone for up to d.
func (p *process) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if p.groupGone() {
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

// stdinGrace bounds the wait after closing a child's stdin. A server that
// exits on EOF does so within milliseconds; many Node servers keep timers
// alive and never do, and every shutdown (and every `mcp-gateway status`)
// would pay the full grace for them.
const stdinGrace = 500 * time.Millisecond

// stop ends the process group politely and then less so: close stdin and
// wait up to min(grace, stdinGrace), SIGTERM the group and wait up to
// grace, SIGKILL the group. It returns once the child has been reaped.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	if !p.waitGone(min(grace, stdinGrace)) {
		p.signalGroup(syscall.SIGTERM)
		if !p.waitGone(grace) {
			p.signalGroup(syscall.SIGKILL)
		}
	}
	<-p.exited
}

// kill SIGKILLs the group (whatever is left of it after the child died) and
// waits for the child to be reaped.
func (p *process) kill() {
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
}

// closeFiles closes our ends of the pipes; blocked reads return.
func (p *process) closeFiles() {
	p.stdin.Close()
	p.stdout.Close()
	p.stderr.Close()
}

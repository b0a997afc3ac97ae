package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// group is the child's Job Object. The job is created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its only handle is ours (not
// inheritable): when the gateway exits or is killed, Windows closes the
// handle and terminates every process in the job, grandchildren included.
type group struct {
	job windows.Handle
	mem *jobEvents // with a memory limit: the job's notifications; else nil
}

// Completion keys on a job's port: the job's own messages, and the two the
// gateway posts to its reader.
const (
	keyJob = 1 + iota
	keySync
	keyQuit
)

// msgJobMemoryLimit is JOB_OBJECT_MSG_JOB_MEMORY_LIMIT: the job's
// committed memory reached its limit (an allocation was refused).
const msgJobMemoryLimit = 10

// jobEvents reads a job's completion port, where Windows posts the job's
// messages, and remembers whether one said the memory limit was hit. Its
// goroutine is the group's: it returns when close posts keyQuit.
type jobEvents struct {
	port   windows.Handle
	hit    atomic.Bool
	mu     sync.Mutex    // one sync at a time; guards closed
	closed bool          // port released: its handle may name something else now
	ack    chan struct{} // the reader has read a keySync: all before it too
	done   chan struct{} // the reader has returned
}

// watchMemory gives job a completion port and starts its reader.
func watchMemory(job windows.Handle) (*jobEvents, error) {
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		return nil, fmt.Errorf("create completion port: %w", err)
	}
	assoc := struct {
		CompletionKey  uintptr
		CompletionPort windows.Handle
	}{keyJob, port} // JOBOBJECT_ASSOCIATE_COMPLETION_PORT
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectAssociateCompletionPortInformation,
		uintptr(unsafe.Pointer(&assoc)), uint32(unsafe.Sizeof(assoc))); err != nil {
		windows.CloseHandle(port)
		return nil, fmt.Errorf("associate the job with its completion port: %w", err)
	}
	e := &jobEvents{port: port, ack: make(chan struct{}), done: make(chan struct{})}
	go e.read()
	return e, nil
}

func (e *jobEvents) read() {
	defer close(e.done)
	for {
		var msg uint32
		var key uintptr
		var ov *windows.Overlapped
		if err := windows.GetQueuedCompletionStatus(e.port, &msg, &key, &ov, windows.INFINITE); err != nil {
			return // the port is gone: nothing more will come
		}
		switch {
		case key == keyJob && msg == msgJobMemoryLimit:
			e.hit.Store(true)
		case key == keySync:
			e.ack <- struct{}{}
		case key == keyQuit:
			return
		}
	}
}

// hitLimit reports whether the job reported its memory limit: everything
// Windows posted before the call has been read (the port is first in,
// first out; a limit is posted when the allocation is refused, before the
// process can end).
func (e *jobEvents) hitLimit() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return e.hit.Load() // the reader read all before it quit
	}
	if err := windows.PostQueuedCompletionStatus(e.port, 0, keySync, nil); err == nil {
		select {
		case <-e.ack:
		case <-e.done:
		}
	}
	return e.hit.Load()
}

// close stops the reader and releases the port.
func (e *jobEvents) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if err := windows.PostQueuedCompletionStatus(e.port, 0, keyQuit, nil); err == nil {
		<-e.done
	}
	windows.CloseHandle(e.port)
}

// command resolves name as a Windows user writes it: "npx" finds npx.cmd
// through PATH and PATHEXT (exec.LookPath), and a relative path with a
// separator is relative to dir, as on Unix. Batch files run through
// cmd.exe with a command line quoted for cmd.exe (see batchCommandLine):
// Go's own quoting follows the C runtime's rules, which cmd.exe does not.
func command(name string, args []string, dir string) (*exec.Cmd, error) {
	if dir != "" && !filepath.IsAbs(name) && strings.ContainsAny(name, `/\`) {
		name = filepath.Join(dir, name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cmd", ".bat":
		shell := comSpec()
		line, err := batchCommandLine(shell, path, args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cmd := exec.Command(shell)
		cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
		return cmd, nil
	}
	return exec.Command(path, args...), nil
}

// comSpec is cmd.exe's path: %ComSpec%, else System32's.
func comSpec() string {
	if s := os.Getenv("ComSpec"); s != "" {
		return s
	}
	return filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
}

// start starts cmd suspended, puts it in a new kill-on-close Job Object
// (with s's memory and process limits) and only then lets it run: a child
// that started running first could start its own children outside the job.
func start(cmd *exec.Cmd, s Spec) (g group, err error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return group{}, fmt.Errorf("create job object: %w", err)
	}
	defer func() {
		if err != nil {
			windows.CloseHandle(job)
		}
	}()
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if s.MemoryMB > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
		info.JobMemoryLimit = uintptr(s.MemoryMB) << 20
	}
	if s.Processes > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = uint32(s.Processes)
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return group{}, fmt.Errorf("set job object limits: %w", err)
	}
	var mem *jobEvents
	if s.MemoryMB > 0 {
		if mem, err = watchMemory(job); err != nil {
			return group{}, err
		}
		defer func() {
			if err != nil {
				mem.close()
			}
		}()
	}

	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// CREATE_NO_WINDOW: a console child of a gateway that has no console
	// (started by a desktop app) would otherwise open a console window.
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW
	if err := cmd.Start(); err != nil {
		return group{}, err
	}
	if err := assignAndResume(job, uint32(cmd.Process.Pid)); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return group{}, err
	}
	return group{job: job, mem: mem}, nil
}

// assignAndResume puts the suspended process pid in job and resumes its
// (only) thread.
func assignAndResume(job windows.Handle, pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		return fmt.Errorf("assign process %d to job object: %w", pid, err)
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	resumed := 0
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("resume process %d: no thread found", pid)
	}
	return nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// empty reports whether no process is left in the job.
func (g group) empty() bool {
	var info jobAccounting
	err := windows.QueryInformationJobObject(g.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses == 0
}

// terminate terminates the job: Windows has no SIGTERM that console
// programs without a shared console receive, so closing stdin (done by
// Stop before) is the polite step.
func (g group) terminate(func() bool) { g.kill() }

// kill terminates every process in the job.
func (g group) kill() { _ = windows.TerminateJobObject(g.job, 1) }

// memoryLimitHit reports whether the job reached its memory limit.
func (g group) memoryLimitHit() bool { return g.mem != nil && g.mem.hitLimit() }

// close releases the job handle (which kills anything left in it) and
// its completion port.
func (g group) close() {
	_ = windows.CloseHandle(g.job)
	if g.mem != nil {
		g.mem.close()
	}
}

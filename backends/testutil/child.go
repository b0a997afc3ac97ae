package testutil

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Child is a process under test whose stdin and stdout are a Client and
// whose stderr is kept. At the end of the test its stdin is closed and it
// must exit within 10 s (else it is killed and the test fails); its stderr
// is logged if the test failed.
type Child struct {
	*Client
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stderr *Buffer
	stdout *os.File // the test's end
	done   chan struct{}
	err    error
}

// StartChild runs bin with args in env (nil is the test's own); o
// configures the client on its pipes, whose failures show its stderr.
func StartChild(t testing.TB, bin string, args, env []string, o ClientOptions) *Child {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Our own pipe rather than StdoutPipe: Wait would close that at exit,
	// possibly before the last replies are read.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	c := &Child{Cmd: cmd, Stdin: stdin, Stderr: &Buffer{}, stdout: stdout, done: make(chan struct{})}
	cmd.Stderr = c.Stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		t.Fatal(err)
	}
	o.Context = func() string { return "stderr:\n" + c.Stderr.String() }
	c.Client = NewClient(t, stdin, stdout, o)
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		// A grandchild may still hold the write end: stop reading.
		defer stdout.Close()
		if !c.Stop(10 * time.Second) {
			t.Errorf("%s did not exit within 10s of stdin closing", bin)
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", bin, c.Stderr)
		}
	})
	return c
}

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err is the child's exit (nil for status 0); valid once Done is closed.
func (c *Child) Err() error { return c.err }

// Exited waits for the child to exit and returns how; it fails the test if
// the child is still running after d.
func (c *Child) Exited(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %s\nstderr:\n%s", c.Cmd.Path, d, c.Stderr)
	}
	return c.err
}

// Stop closes the child's stdin and waits up to d for it to exit, and kills
// it if it has not; it reports whether the child exited by itself. It may
// be called more than once.
func (c *Child) Stop(d time.Duration) bool {
	c.Stdin.Close()
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		c.Cmd.Process.Kill()
		<-c.done
		return false
	}
}

// CloseOutput closes the test's end of the child's stdout, as a client
// that goes away does: the child's next write fails.
func (c *Child) CloseOutput() { c.stdout.Close() }

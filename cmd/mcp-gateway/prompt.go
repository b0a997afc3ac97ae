package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// prompter asks the user on a terminal: Line with the answer echoed,
// Secret without. Each returns the answer without its line end, or an
// error when the input ends or ctx is done (Ctrl-C).
type prompter interface {
	Line(ctx context.Context, prompt string) (string, error)
	Secret(ctx context.Context, prompt string) (string, error)
}

// errInterrupted is a prompt cut short by Ctrl-C (or the end of input).
var errInterrupted = errors.New("interrupted")

// ttyPrompter prompts on the process's terminal: stdin when it is one,
// the prompt on w (stderr).
type ttyPrompter struct {
	in *os.File
	w  io.Writer
}

// terminalOf is the prompter of stdin's terminal, or nil when stdin is
// not one.
func terminalOf(stdin io.Reader, w io.Writer) prompter {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &ttyPrompter{in: f, w: w}
}

func (t *ttyPrompter) Line(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(t.w, prompt)
	return t.read(ctx, func() (string, error) { return readLine(t.in) })
}

func (t *ttyPrompter) Secret(ctx context.Context, prompt string) (string, error) {
	fd := int(t.in.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	// Echo goes off before the prompt is shown, so that a secret typed or
	// pasted the moment it appears is not echoed, and back on however the
	// prompt ends: a Ctrl-C while the read waits leaves the terminal as it
	// was.
	defer term.Restore(fd, state)
	if err := noEcho(fd); err != nil {
		return "", err
	}
	fmt.Fprint(t.w, prompt)
	s, err := t.read(ctx, func() (string, error) { return readLine(t.in) })
	fmt.Fprintln(t.w)
	return s, err
}

// read runs one blocking read of the terminal and returns its answer, or
// errInterrupted when ctx ends first. A read a signal interrupted stays
// blocked on the terminal until the process exits, which it does next:
// a command that prompts ends after its prompts.
func (t *ttyPrompter) read(ctx context.Context, read func() (string, error)) (string, error) {
	type answer struct {
		s   string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		s, err := read()
		done <- answer{s, err}
	}()
	select {
	case a := <-done:
		if errors.Is(a.err, io.EOF) {
			return "", errInterrupted
		}
		return a.s, a.err
	case <-ctx.Done():
		fmt.Fprintln(t.w)
		return "", errInterrupted
	}
}

// readLine reads one line a byte at a time, so that nothing after it is
// taken from the terminal (a secret's read comes next).
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := r.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(c[0])
		}
		if err != nil {
			if b.Len() > 0 && errors.Is(err, io.EOF) {
				return b.String(), nil
			}
			return "", err
		}
	}
}

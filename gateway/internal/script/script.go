// Package script runs a JavaScript program that calls tools, in a fresh
// modernc.org/quickjs VM per run with hard limits on time, memory, tool
// calls, output and call depth. The script's only way out of the VM is the
// tool API the caller supplies (Options.Call); the package imports nothing
// of the gateway.
package script

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Limits bound one run. Zero fields take the defaults.
type Limits struct {
	Wall     time.Duration // default 30s: the whole run, tool calls included
	Memory   int64         // bytes, default 64 MiB: the VM's heap
	Calls    int           // default 100: tool calls the run may start
	Output   int           // bytes, default 64 KiB: the return value's JSON plus console output
	Parallel int           // default 8: tool calls in flight at once (Promise.all beyond it queues)
}

// The defaults of Limits.
const (
	DefaultWall     = 30 * time.Second
	DefaultMemory   = 64 << 20
	DefaultCalls    = 100
	DefaultOutput   = 64 << 10
	DefaultParallel = 8
)

// WithDefaults returns l with its zero (or negative) fields set to the
// defaults: the limits a run with l applies.
func (l Limits) WithDefaults() Limits {
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.Calls <= 0 {
		l.Calls = DefaultCalls
	}
	if l.Output <= 0 {
		l.Output = DefaultOutput
	}
	if l.Parallel <= 0 {
		l.Parallel = DefaultParallel
	}
	return l
}

// Call calls one tool for the script and returns its CallToolResult JSON as the
// backend returned it, or an error (unknown tool, refused by policy, ...).
// It is called on goroutines the run owns, up to Limits.Parallel at once; ctx
// is cancelled when the run ends or is cancelled.
type Call func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

// Options configure one run.
type Options struct {
	Limits Limits
	Call   Call
	// Progress, if set, is told after each tool call ends (calls made so far, name).
	Progress func(calls int, name string)
}

// Result is what a run that ended normally produced.
type Result struct {
	Value json.RawMessage // the script's return value as JSON (null when undefined)
	Logs  []string        // console.log/info/warn/error lines, bounded by Limits.Output
	Calls int             // tool calls started
}

// LimitError is the error of a run ended by a limit; Limit is "time",
// "memory", "calls", "output" or "stack" (deep recursion).
type LimitError struct {
	Limit string
	Value string // "30s", "64 MiB", "100 calls", ...
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("script stopped: %s limit reached (%s)", e.Limit, e.Value)
}

// ScriptError is an exception the script did not catch (message and JS stack),
// or a syntax error.
type ScriptError struct {
	Message string
	Stack   string
}

func (e *ScriptError) Error() string {
	return "script error: " + e.Message
}

// String writes the limits as a model or a person reads them: "30s,
// 64 MiB of memory, 100 tool calls (8 at once), 64 KiB of output".
func (l Limits) String() string {
	return fmt.Sprintf("%s, %s of memory, %d tool calls (%d at once), %s of output",
		l.Wall, byteSize(l.Memory), l.Calls, l.Parallel, byteSize(int64(l.Output)))
}

// byteSize renders n bytes as people write limits: "64 MiB", "64 KiB", "100 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

package script

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/quickjs"
)

//go:embed prelude.js
var prelude string

// maxStack bounds the script's call depth, in the engine's stack slots
// (about one per JavaScript call; a callback through a built-in such as
// Array.prototype.map takes more). It is the engine's default, which keeps
// deep recursion from growing the goroutine's stack without end, stated
// here because the stack limit's error names it.
const maxStack = 5000

// errNeverSettles ends a run whose promise is pending with nothing left that
// could settle it: no tool call in flight or queued and no job to run.
var errNeverSettles = &ScriptError{Message: "the script's promise never settles: it awaits something that is not a tool call (or its promise jobs ran out of memory)"}

// Run runs src, the body of an async function (so `await` and `return` work at
// top level), in a fresh VM with the tool API and nothing else. It returns when
// the script's promise settles, a limit is hit, or ctx is done (then ctx.Err(),
// with every call in flight cancelled and the VM interrupted).
func Run(ctx context.Context, src string, opts Options) (Result, error) {
	lim := opts.Limits.WithDefaults()
	deadline := time.Now().Add(lim.Wall)
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	vm, err := quickjs.NewVM()
	if err != nil {
		return Result{}, fmt.Errorf("script: new VM: %w", err)
	}
	defer vm.Close()
	vm.SetMemoryLimit(uintptr(lim.Memory))
	vm.SetMaxStackSize(maxStack)
	// Atomics.wait would block the goroutine where no interrupt reaches it.
	// Not blocking is the engine's default; this keeps it so.
	vm.SetCanBlock(false)

	r := &run{
		parent:   ctx,
		ctx:      runCtx,
		deadline: deadline,
		lim:      lim,
		opts:     opts,
		vm:       vm,
		results:  make(chan outcome, lim.Parallel),
	}
	callCtx, cancelCalls := context.WithCancel(runCtx)
	r.callCtx = callCtx
	// Calls in flight are cancelled and waited for before the VM closes: no
	// goroutine of the run outlives Run.
	defer r.calls.Wait()
	defer cancelCalls()

	// The watchdog interrupts the VM once the run's context is done, and
	// again every millisecond until Run returns: entering the VM clears a
	// pending interrupt, and a script that catches what it can still loops.
	stop := make(chan struct{})
	var watchdog sync.WaitGroup
	watchdog.Go(func() {
		select {
		case <-stop:
			return
		case <-runCtx.Done():
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			vm.Interrupt()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	defer watchdog.Wait()
	defer close(stop)

	if err := vm.RegisterHostFunc("__host", r.host); err != nil {
		return Result{}, fmt.Errorf("script: register the host function: %w", err)
	}
	// The prelude runs within the limits too: on a busy machine the wall
	// time can end before it does.
	err = r.enter(func() (err error) {
		r.entry, err = vm.EvalValue(prelude, quickjs.EvalGlobal)
		return err
	})
	if err != nil {
		err = r.classify(err)
		var le *LimitError
		if !errors.As(err, &le) && r.parent.Err() == nil {
			err = fmt.Errorf("script: prelude: %w", err)
		}
		return Result{}, err
	}
	defer r.entry.Free()

	if err := r.loop(src); err != nil {
		return Result{Logs: r.logs, Calls: r.started}, err
	}
	return Result{Value: r.value, Logs: r.logs, Calls: r.started}, nil
}

// request is a tool call the script made.
type request struct {
	id   int
	name string
	args json.RawMessage
}

// outcome is how a tool call ended.
type outcome struct {
	request
	result json.RawMessage
	err    error
}

// run is the state of one Run. Everything but the channel and the call
// goroutines' WaitGroup belongs to the goroutine that called Run, which is
// also the only one that enters the VM.
type run struct {
	parent, ctx, callCtx context.Context
	// deadline is the end of the wall time. It is not runCtx's deadline,
	// which can be the caller's, earlier: that one ends the run through
	// the watchdog, with the caller's error.
	deadline time.Time
	lim      Limits
	opts     Options
	vm       *quickjs.VM
	entry    quickjs.Value // the prelude's function: start, settle

	queue    []request
	inFlight int
	results  chan outcome
	calls    sync.WaitGroup
	argBytes int // bytes of the arguments of the calls queued and in flight
	started  int // tool calls the script started
	ended    int // tool calls that ended
	logs     []string
	output   int         // bytes of logs
	limit    *LimitError // set by the host function, which then interrupts the VM
	finished bool        // the script's promise settled
	value    json.RawMessage
	failure  error // the script's promise rejected
}

// loop starts the script and turns the event loop until its promise settles
// or the run must end.
func (r *run) loop(src string) error {
	err := r.enter(func() error {
		_, err := r.entry.Call(quickjs.UndefinedValue, "start", src)
		return err
	})
	for err == nil {
		if err = r.drain(); err != nil || r.finished {
			break
		}
		for len(r.queue) > 0 && r.inFlight < r.lim.Parallel {
			r.startCall(r.queue[0])
			r.queue = r.queue[1:]
		}
		if r.inFlight == 0 {
			err = errNeverSettles
			break
		}
		select {
		case o := <-r.results:
			r.inFlight--
			r.ended++
			r.argBytes -= len(o.args)
			if r.opts.Progress != nil {
				r.opts.Progress(r.ended, o.name)
			}
			err = r.enter(func() error { return r.settle(o) })
		case <-r.ctx.Done():
			err = r.ctx.Err()
		}
	}
	if err != nil {
		return r.classify(err)
	}
	if r.failure != nil {
		return r.failure
	}
	if len(r.value)+r.output > r.lim.Output {
		return &LimitError{Limit: "output", Value: byteSize(int64(r.lim.Output))}
	}
	return nil
}

// enter runs f, which calls into the VM, unless the run must end already. The
// eval timeout is what is left of the wall time, so the VM stops at the
// deadline even before the watchdog's interrupt lands.
func (r *run) enter(f func() error) error {
	if r.limit != nil {
		return r.limit
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	left := time.Until(r.deadline)
	if left <= 0 {
		return r.timeLimit()
	}
	if err := r.vm.SetEvalTimeout(left); err != nil {
		return err
	}
	return f()
}

// maxJobs is how many jobs ExecutePendingJobs runs at most before it gives
// up with an error that is not a *quickjs.Error.
const maxJobs = 1 << 20

// drain runs the VM's pending jobs, promise reactions and the script's
// continuations, until there are none. A queue that keeps feeding itself is
// the wall time's to end, not the engine's job bound's.
func (r *run) drain() error {
	for {
		var n int
		err := r.enter(func() (err error) {
			n, err = r.vm.ExecutePendingJobs()
			return err
		})
		var qe *quickjs.Error
		if err != nil && n >= maxJobs && !errors.As(err, &qe) && r.limit == nil {
			continue
		}
		return err
	}
}

// classify turns why the VM stopped into Run's error: a limit the host
// function hit, the caller's cancellation, the wall time, or what the
// engine threw.
func (r *run) classify(err error) error {
	if r.limit != nil {
		return r.limit
	}
	if perr := r.parent.Err(); perr != nil {
		return perr
	}
	if r.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return r.timeLimit()
	}
	var le *LimitError
	if errors.As(err, &le) {
		return err
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return err
	}
	var qe *quickjs.Error
	if errors.As(err, &qe) {
		if le := r.engineLimit(qe.Name, qe.Message); le != nil {
			return le
		}
		if qe.Name == "" && qe.Error() == "null" {
			return r.memoryLimit()
		}
		return scriptError(qe.Error(), qe.Stack)
	}
	return fmt.Errorf("script: %w", err)
}

// engineLimit returns the LimitError of an error the engine throws at a
// limit: out of memory, stack overflow, or the interrupt of the eval timeout
// (which can fire a moment before the run's context sees its deadline).
func (r *run) engineLimit(name, message string) *LimitError {
	if name != "InternalError" {
		return nil
	}
	switch message {
	case "out of memory":
		return r.memoryLimit()
	case "stack overflow":
		return &LimitError{Limit: "stack", Value: fmt.Sprintf("call depth %d", maxStack)}
	case "interrupted":
		return r.timeLimit()
	}
	return nil
}

// memoryLimit is the error of a run that ran out of memory. The engine
// throws null when it runs out of memory while making its "out of memory"
// error, so a script that ends by throwing null gets it too: one that throws
// null itself is told it hit the memory limit, which is the price of telling
// an allocation loop so.
func (r *run) memoryLimit() *LimitError {
	return &LimitError{Limit: "memory", Value: byteSize(r.lim.Memory)}
}

func (r *run) timeLimit() *LimitError {
	return &LimitError{Limit: "time", Value: r.lim.Wall.String()}
}

// stopAt ends the run at limit l: the VM is interrupted, and the uncatchable
// exception that makes ends the script when the host function returns.
func (r *run) stopAt(l *LimitError) {
	if r.limit == nil {
		r.limit = l
	}
	r.vm.Interrupt()
}

// host is the one host function the prelude keeps: ("call", id, name,
// argsJSON), ("log", level, line), ("done", true, valueJSON) or ("done",
// false, message, stack, name, errMessage, thrownNull).
func (r *run) host(args []any) (any, error) {
	op, _ := arg[string](args, 0)
	switch op {
	case "call":
		id, _ := arg[int](args, 1)
		name, _ := arg[string](args, 2)
		js, _ := arg[string](args, 3)
		if !strings.HasPrefix(js, "{") {
			// The prelude checks this; Call is promised an object.
			return nil, errors.New("the arguments must be a JSON object")
		}
		if r.started >= r.lim.Calls {
			r.stopAt(&LimitError{Limit: "calls", Value: fmt.Sprintf("%d calls", r.lim.Calls)})
			return nil, nil
		}
		// The arguments of the calls queued and in flight live outside the
		// VM, in Go's heap: they count against the memory limit too, or a
		// script could queue a hundred copies of its largest string.
		r.argBytes += len(js)
		if int64(r.argBytes) > r.lim.Memory {
			r.stopAt(r.memoryLimit())
			return nil, nil
		}
		r.started++
		r.queue = append(r.queue, request{id: id, name: name, args: json.RawMessage(js)})
	case "log":
		level, _ := arg[string](args, 1)
		line, _ := arg[string](args, 2)
		if level != "log" && level != "info" {
			line = level + ": " + line
		}
		r.output += len(line) + 1
		if r.output > r.lim.Output {
			r.stopAt(&LimitError{Limit: "output", Value: byteSize(int64(r.lim.Output))})
			return nil, nil
		}
		r.logs = append(r.logs, line)
	case "done":
		if r.finished {
			return nil, nil
		}
		r.finished = true
		if ok, _ := arg[bool](args, 1); ok {
			v, _ := arg[string](args, 2)
			if !json.Valid([]byte(v)) {
				r.failure = &ScriptError{Message: "the return value cannot be converted to JSON"}
				return nil, nil
			}
			r.value = json.RawMessage(v)
			return nil, nil
		}
		msg, _ := arg[string](args, 2)
		stack, _ := arg[string](args, 3)
		name, _ := arg[string](args, 4)
		emsg, _ := arg[string](args, 5)
		if le := r.engineLimit(name, emsg); le != nil {
			r.failure = le
			return nil, nil
		}
		if isNull, _ := arg[bool](args, 6); isNull {
			r.failure = r.memoryLimit()
			return nil, nil
		}
		r.failure = scriptError(msg, stack)
	default:
		return nil, fmt.Errorf("script: unknown host operation %q", op)
	}
	return nil, nil
}

// arg returns args[i] as a T.
func arg[T any](args []any, i int) (T, bool) {
	var zero T
	if i >= len(args) {
		return zero, false
	}
	v, ok := args[i].(T)
	return v, ok
}

// startCall starts tool call q on a goroutine of the run. The result channel
// holds Limits.Parallel outcomes, as many as can be in flight, so the send
// never blocks, also when Run has stopped reading.
func (r *run) startCall(q request) {
	r.inFlight++
	call := r.opts.Call
	ctx := r.callCtx
	r.calls.Go(func() {
		o := outcome{request: q}
		if call == nil {
			o.err = errors.New("no tools are available to this script")
		} else {
			o.result, o.err = call(ctx, q.name, q.args)
		}
		r.results <- o
	})
}

// settle resolves or rejects the promise of the tool call o ended.
func (r *run) settle(o outcome) error {
	s := convert(o.result, o.err)
	var code any
	if s.hasCode {
		code = s.code
	}
	_, err := r.entry.Call(quickjs.UndefinedValue, "settle", o.id, s.ok, s.value, s.message, code, s.result)
	return err
}

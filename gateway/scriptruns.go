package gateway

import (
	"fmt"
	"sync"
)

// scriptRuns counts the runs of run_script under way, per caller and in
// all, so that gateway.code_mode_limits.runs and runs_total bound them:
// each run holds a VM of up to memory_bytes and goroutines, and a client
// may send any number of calls at once.
type scriptRuns struct {
	mu    sync.Mutex
	by    map[any]int // caller (runKey) → runs under way
	total int
}

// runKey is whom a run counts against: the caller's authenticated identity,
// else its session (the front), which is all an anonymous caller is.
func (f *front) runKey() any {
	if id := f.grant().identity; id != "" {
		return id
	}
	return f
}

// startRun admits a run for f's caller, or says which bound it is over.
// The run must call the returned end once it has ended.
func (f *front) startRun() (end func(), refused string) {
	l := f.g.opts.Config.Gateway.CodeModeLimits
	rs, key := &f.g.scriptRuns, f.runKey()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch {
	case l.Runs > 0 && rs.by[key] >= l.Runs:
		return nil, fmt.Sprintf("run_script refused: %d of your runs are already under way, your limit (gateway.code_mode_limits.runs); wait for one to end", rs.by[key])
	case l.RunsTotal > 0 && rs.total >= l.RunsTotal:
		return nil, fmt.Sprintf("run_script refused: the gateway already runs %d scripts, its limit (gateway.code_mode_limits.runs_total); try again when one has ended", rs.total)
	}
	if rs.by == nil {
		rs.by = make(map[any]int)
	}
	rs.by[key]++
	rs.total++
	return func() {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if rs.by[key]--; rs.by[key] == 0 {
			delete(rs.by, key)
		}
		rs.total--
	}, ""
}

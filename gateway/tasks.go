package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Tasks pass through. A tools/call with params.task goes to the backend
// with its task member as the client wrote it, and the task its answer
// creates is recorded against that backend and that session (recordTask),
// so that tasks/get, tasks/result and tasks/cancel reach the backend that
// owns the task. Backends are shared by every session, so a session sees
// only the tasks it created: any other task id is answered -32602, as a
// backend answers an unknown one, and tasks/list, which asks every backend
// that declared tasks.list and lists their tasks together in one page,
// leaves out the others. A backend's notifications/tasks/status goes only
// to the session that created its task. A sessionless HTTP request has no
// session to own anything, so it sees every task the gateway recorded.
// tasks/result waits for the task to end, so it is not bounded by the
// server's call timeout.

// Task ownership is bounded. An entry ends when its task is known to be
// finished (completed, failed or cancelled, from a tasks/get, tasks/cancel
// or tasks/list answer, a status notification, or a tasks/result that
// returned) and the backend's ttl has run out since the gateway recorded
// it, or, when the backend gave none, taskFinishedTTL after the end. An
// ended entry answers as an unknown task. A table also holds at most
// taskOwnersLimit entries: past it, the oldest finished tasks go first,
// then the oldest others (a task whose end nobody asked about).
const (
	taskFinishedTTL = time.Hour
	taskOwnersLimit = 10000
)

// taskOwners maps task ids to the backends that own them. Each session has
// one for the tasks it created; the gateway has one more, filled only by
// sessionless HTTP requests, where every request is a session of its own (so
// it ends with the sessionless mode's own traffic, not with every session's).
// A task the owner no longer knows (-32602) is forgotten.
type taskOwners struct {
	mu    sync.Mutex
	owner map[string]*taskOwner
	seq   uint64 // recording order
	limit int    // 0: taskOwnersLimit
}

// taskOwner is one task's entry.
type taskOwner struct {
	server   string
	who      string // the creator's principal key (front.identity), in the gateway's table
	seq      uint64
	recorded time.Time
	ttl      time.Duration // the backend's; 0: none given
	finished time.Time     // zero while the task may still run
}

// expired reports whether the entry has ended at now.
func (o *taskOwner) expired(now time.Time) bool {
	switch {
	case o.finished.IsZero():
		return false
	case o.ttl > 0:
		return !now.Before(o.recorded.Add(o.ttl))
	}
	return !now.Before(o.finished.Add(taskFinishedTTL))
}

// taskState is what a backend's answer says of a task.
type taskState struct {
	final bool
	ttl   time.Duration
}

// stateOf reads a task object's status and ttl (milliseconds; null or
// absent: unlimited).
func stateOf(task json.RawMessage) taskState {
	status, _ := wire.Unquote(wire.Member(task, "status"))
	var ttl float64
	_ = json.Unmarshal(wire.Member(task, "ttl"), &ttl)
	st := taskState{final: status == "completed" || status == "failed" || status == "cancelled"}
	if ttl > 0 {
		st.ttl = time.Duration(ttl * float64(time.Millisecond))
	}
	return st
}

// record adds server's task id, created by who, or updates its entry.
func (t *taskOwners) record(id, server, who string, st taskState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	o := t.owner[id]
	if o == nil || o.server != server || o.who != who {
		if t.owner == nil {
			t.owner = make(map[string]*taskOwner)
		}
		t.shrink(now)
		t.seq++
		o = &taskOwner{server: server, who: who, seq: t.seq, recorded: now}
		t.owner[id] = o
	}
	o.set(st, now)
}

// update updates server's task id if the table has it.
func (t *taskOwners) update(id, server string, st taskState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.owner[id]; o != nil && o.server == server {
		o.set(st, time.Now())
	}
}

func (o *taskOwner) set(st taskState, now time.Time) {
	if st.ttl > 0 {
		o.ttl = st.ttl
	}
	if st.final && o.finished.IsZero() {
		o.finished = now
	}
}

// shrink makes room for one more entry: it drops the ended entries, then,
// at the limit, the oldest finished and then the oldest others down to
// seven eighths of it, so that the sort is paid once per many records.
func (t *taskOwners) shrink(now time.Time) {
	limit := cmp.Or(t.limit, taskOwnersLimit)
	if len(t.owner) < limit {
		return
	}
	for id, o := range t.owner {
		if o.expired(now) {
			delete(t.owner, id)
		}
	}
	keep := limit - max(limit/8, 1)
	if len(t.owner) <= keep {
		return
	}
	ids := slices.Collect(maps.Keys(t.owner))
	slices.SortFunc(ids, func(a, b string) int {
		oa, ob := t.owner[a], t.owner[b]
		if fa, fb := !oa.finished.IsZero(), !ob.finished.IsZero(); fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return cmp.Compare(oa.seq, ob.seq)
	})
	for _, id := range ids[:len(ids)-keep] {
		delete(t.owner, id)
	}
}

// lookup returns the server of task id, if who created it.
func (t *taskOwners) lookup(id, who string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.owner[id]
	if o == nil || o.who != who {
		return "", false
	}
	if o.expired(time.Now()) {
		delete(t.owner, id)
		return "", false
	}
	return o.server, true
}

func (t *taskOwners) forget(id, server string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.owner[id]; o != nil && o.server == server {
		delete(t.owner, id)
	}
}

// size is the number of entries, ended or not.
func (t *taskOwners) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.owner)
}

// recordTask records the task a task-augmented tools/call created (raw is
// its result, {"task":{"taskId":...}}) as server's and this session's (its
// status notifications come to it). A client names a task by its id alone,
// so if two backends give one session equal ids, the later task is the one
// the session reaches.
func (f *front) recordTask(server string, raw json.RawMessage) {
	f.recordTaskObject(server, wire.Member(raw, "task"))
}

// recordTaskObject records a task object (one with a taskId) as server's
// and this session's.
func (f *front) recordTaskObject(server string, task json.RawMessage) {
	id, ok := wire.Unquote(wire.Member(task, "taskId"))
	if !ok || id == "" {
		return
	}
	st := stateOf(task)
	f.tasks.record(id, server, "", st)
	if f.sessionless {
		f.g.tasks.record(id, server, f.callerIdentity(), st)
	}
}

// updateTask updates what this session (and, for a sessionless request, the
// gateway) knows of a task it reached.
func (f *front) updateTask(id, server string, st taskState) {
	f.tasks.update(id, server, st)
	if f.sessionless {
		f.g.tasks.update(id, server, st)
	}
}

// taskServer returns the backend that owns a task this session may reach:
// one it created, or, for a sessionless request, any the gateway recorded
// for its caller (another caller's is not found, as a session's is).
func (f *front) taskServer(id string) (string, bool) {
	server, ok := f.tasks.lookup(id, "")
	if !ok && f.sessionless {
		return f.g.tasks.lookup(id, f.callerIdentity())
	}
	return server, ok
}

// ownsTask reports whether this session created server's task id, or, for
// a sessionless request, its caller did.
func (f *front) ownsTask(id, server string) bool {
	owner, ok := f.taskServer(id)
	return ok && owner == server
}

// task serves the tasks of either era: for a request of the handshake era
// 2025-11-25's tasks/get, tasks/result, tasks/cancel and tasks/list, the
// task found in this session's table (taskServer); for one of the
// per-request era the tasks extension's tasks/get, tasks/update and
// tasks/cancel, the task found by its sealed id (taskids.go), with the
// request's capabilities, which must declare the extension (-32021). The
// request goes to the owner with the backend's own id, and its answer
// comes back as the owner wrote it, but for the id: a task is known to the
// client by the id it was given.
func (f *front) task(ctx context.Context, method string, params json.RawMessage, rm reqMeta) (json.RawMessage, error) {
	b := f.g.opts.Backends
	if method == "tasks/list" {
		return f.listTasks(ctx, params)
	}
	perRequest := rm.era == wire.PerRequestEra
	if perRequest && !declaresTasks(rm.caps) {
		return nil, errNoTasksExtension
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	id, ok := wire.Unquote(wire.Member(params, "taskId"))
	if !ok {
		return nil, errInvalidParams("taskId must be a string")
	}
	var server, own string
	opts := backends.CallOptions{Unbounded: method == "tasks/result", ClientCaps: f.backendCaps(nil), Caller: f.upstream()}
	if perRequest {
		ref, err := f.taskOf(id)
		if err != nil {
			return nil, err
		}
		server, own = ref.Server, ref.Task
		opts.ClientCaps = rm.caps
		params, _ = wire.SetMember(params, "taskId", jsonString(own))
	} else if server, ok = f.taskServer(id); !ok {
		return nil, errInvalidParams("Task not found: " + id)
	} else {
		own = id
	}
	raw, err := b.Request(ctx, server, method, params, opts)
	if err != nil {
		if re := (*backends.RPCError)(nil); !perRequest && errors.As(err, &re) && re.Code == jsonrpc.CodeInvalidParams {
			f.g.tasks.forget(id, server) // expired, or never the backend's
			f.tasks.forget(id, server)
		}
		return nil, err
	}
	if (method == "tasks/result" || method == "tasks/get") && f.g.redacts() {
		// A task's result is a tool's (tasks/get of the per-request era
		// carries it too), masked before the gateway's own members (the
		// sealed id) are set.
		raw, _ = safetext.MaskShapes(raw)
	}
	switch {
	case perRequest:
		if method == "tasks/get" {
			if out, err := wire.SetMember(raw, "taskId", jsonString(id)); err == nil {
				raw = out
			}
		}
	case method == "tasks/result":
		f.updateTask(id, server, taskState{final: true}) // it returns when the task has ended
	default:
		f.updateTask(id, server, stateOf(raw))
	}
	return raw, nil
}

// errNoTasksExtension answers a task request of the per-request era whose
// capabilities do not declare the extension, as the extension says.
var errNoTasksExtension = &jsonrpc.Error{
	Code:    codeMissingClientCap,
	Message: "Missing required client capability: " + backends.TasksExtension,
	Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + backends.TasksExtension + `":{}}}}`),
}

// declaresTasks reports whether client capabilities declare the tasks
// extension.
func declaresTasks(caps json.RawMessage) bool {
	return present(wire.Member(wire.Member(caps, "extensions"), backends.TasksExtension))
}

// createdTask returns a backend's answer to a tools/call of a client of
// the per-request era with the id of the task it created, if it created one
// (resultType "task"), sealed (taskids.go); any other answer as it is.
func (f *front) createdTask(server string, raw json.RawMessage) json.RawMessage {
	if rt, _ := wire.Unquote(wire.Member(raw, "resultType")); rt != "task" {
		return raw
	}
	own, ok := wire.Unquote(wire.Member(raw, "taskId"))
	if !ok {
		return raw
	}
	out, err := wire.SetMember(raw, "taskId", jsonString(f.taskID(server, own)))
	if err != nil {
		return raw
	}
	return out
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	out, _ := json.Marshal(s)
	return out
}

// listTasks lists this session's tasks of every backend that declared
// tasks.list, in one page.
func (f *front) listTasks(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkCursor(params); err != nil {
		return nil, err
	}
	b := f.g.opts.Backends
	out := []byte(`{"tasks":[`)
	n := 0
	f.rebuild(ctx, settled)
	for _, server := range b.Declaring("tasks.list") {
		raw, err := b.Request(ctx, server, "tasks/list", nil, backends.CallOptions{Caller: f.upstream()})
		if err != nil {
			f.log.Debug("tasks/list failed", "server", server, "err", err)
			continue
		}
		var list struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if json.Unmarshal(raw, &list) != nil {
			continue
		}
		for _, t := range list.Tasks {
			id, _ := wire.Unquote(wire.Member(t, "taskId"))
			if !f.ownsTask(id, server) {
				continue // another session's, or caller's
			}
			f.recordTaskObject(server, t)
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, t...)
			n++
		}
	}
	return append(out, "]}"...), nil
}

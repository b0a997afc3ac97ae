package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
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
// to the session that created its task. A stateless HTTP request has no
// session to own anything, so it sees every task the gateway recorded.
// tasks/result waits for the task to end, so it is not bounded by the
// server's call timeout.

// taskOwners maps task ids to the backends that own them. Each session has
// one for the tasks it created; the gateway has one more, filled only by
// stateless HTTP requests, where every request is a session of its own (so
// it ends with the stateless mode's own traffic, not with every session's).
// A task the owner no longer knows (-32602) is forgotten.
type taskOwners struct {
	mu    sync.Mutex
	owner map[string]string
}

func (t *taskOwners) record(id, server string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner == nil {
		t.owner = make(map[string]string)
	}
	t.owner[id] = server
}

func (t *taskOwners) lookup(id string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	server, ok := t.owner[id]
	return server, ok
}

func (t *taskOwners) forget(id, server string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner[id] == server {
		delete(t.owner, id)
	}
}

// recordTask records the task a task-augmented tools/call created (raw is
// its result, {"task":{"taskId":...}}) as server's and this session's (its
// status notifications come to it). A client names a task by its id alone,
// so if two backends give one session equal ids, the later task is the one
// the session reaches.
func (f *front) recordTask(server string, raw json.RawMessage) {
	id, ok := wire.Unquote(wire.Member(wire.Member(raw, "task"), "taskId"))
	if !ok || id == "" {
		return
	}
	f.tasks.record(id, server)
	if f.sharedTasks {
		f.g.tasks.record(id, server)
	}
}

// taskServer returns the backend that owns a task this session may reach:
// one it created, or, for a stateless request, any the gateway recorded.
func (f *front) taskServer(id string) (string, bool) {
	server, ok := f.tasks.lookup(id)
	if !ok && f.sharedTasks {
		return f.g.tasks.lookup(id)
	}
	return server, ok
}

// ownsTask reports whether this session created server's task id.
func (f *front) ownsTask(id, server string) bool {
	owner, ok := f.tasks.lookup(id)
	return ok && owner == server
}

// task serves tasks/get, tasks/result, tasks/cancel and tasks/list.
func (f *front) task(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	b := f.g.opts.Backends
	if method == "tasks/list" {
		return f.listTasks(ctx, params)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	id, ok := wire.Unquote(wire.Member(params, "taskId"))
	if !ok {
		return nil, errInvalidParams("taskId must be a string")
	}
	server, ok := f.taskServer(id)
	if !ok || b == nil {
		return nil, errInvalidParams("Task not found: " + id)
	}
	raw, err := b.Request(ctx, server, method, params, backends.CallOptions{Unbounded: method == "tasks/result"})
	if err != nil {
		if re := (*backends.RPCError)(nil); errors.As(err, &re) && re.Code == jsonrpc.CodeInvalidParams {
			f.g.tasks.forget(id, server) // expired, or never the backend's
			f.tasks.forget(id, server)
		}
		return nil, rpcError(err, "", "", f.g.opts.Config.Server.Debug)
	}
	return raw, nil
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
	if b != nil {
		f.settle(ctx)
		for _, server := range b.TaskServers() {
			raw, err := b.Request(ctx, server, "tasks/list", nil, backends.CallOptions{})
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
				if !f.sharedTasks && !f.ownsTask(id, server) {
					continue // another session's
				}
				f.recordTask(server, append(append([]byte(`{"task":`), t...), '}'))
				if n > 0 {
					out = append(out, ',')
				}
				out = append(out, t...)
				n++
			}
		}
	}
	return append(out, "]}"...), nil
}

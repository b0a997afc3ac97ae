package main

import (
	"cmp"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// Tasks (-tasks): a tools/call with params.task is answered at once with a
// task ("<name>-N", status working, the ttl the call asked for or 60 s,
// kept for ever all the same); the task completes after the call's
// arguments.ms milliseconds with the echo tool's result, and a
// notifications/tasks/status reports it. tasks/get, tasks/result (waits
// for the end), tasks/list and tasks/cancel serve the tasks.

// taskCaps is the tasks capability -tasks declares.
const taskCaps = `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

type task struct {
	id     string
	status string // working, completed, cancelled
	result string
	done   chan struct{} // closed when the status is final
	ttl    int           // ms: the ttl the call asked for, else 60000
}

// taskTable holds the tasks of a -tasks server.
type taskTable struct {
	mu    sync.Mutex
	next  int
	tasks map[string]*task
	order []string
}

func (t *task) json() string {
	return `{"taskId":` + quote(t.id) + `,"status":` + quote(t.status) + `,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":` + strconv.Itoa(t.ttl) + `,"pollInterval":20}`
}

// startTask answers a task-augmented tools/call.
func (s *server) startTask(msg message) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
		Task      struct {
			TTL int `json:"ttl"`
		} `json:"task"`
	}
	json.Unmarshal(msg.Params, &p)
	var args struct {
		MS int `json:"ms"`
	}
	json.Unmarshal(p.Arguments, &args)
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage(`{}`)
	}
	tt := &s.taskTable
	tt.mu.Lock()
	tt.next++
	t := &task{id: s.name + "-" + strconv.Itoa(tt.next), status: "working", done: make(chan struct{}), ttl: cmp.Or(p.Task.TTL, 60000)}
	if tt.tasks == nil {
		tt.tasks = map[string]*task{}
	}
	tt.tasks[t.id] = t
	tt.order = append(tt.order, t.id)
	created := t.json()
	tt.mu.Unlock()
	s.reply(msg.ID, `{"task":`+created+`}`)
	go func() {
		time.Sleep(time.Duration(args.MS) * time.Millisecond)
		tt.mu.Lock()
		if t.status != "working" {
			tt.mu.Unlock()
			return
		}
		t.status = "completed"
		t.result = `{"content":[{"type":"text","text":` + quote(string(p.Arguments)) + `}],"structuredContent":` + string(p.Arguments) + `}`
		close(t.done)
		status := t.json()
		tt.mu.Unlock()
		s.send(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + status + `}`)
	}()
}

// serveTask answers tasks/get, tasks/result, tasks/list and tasks/cancel;
// it reports false for any other method.
func (s *server) serveTask(msg message) bool {
	tt := &s.taskTable
	var p struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(msg.Params, &p)
	switch msg.Method {
	case "tasks/list":
		tt.mu.Lock()
		list := `{"tasks":[`
		for i, id := range tt.order {
			if i > 0 {
				list += ","
			}
			list += tt.tasks[id].json()
		}
		tt.mu.Unlock()
		s.reply(msg.ID, list+`]}`)
		return true
	case "tasks/get", "tasks/result", "tasks/cancel":
	default:
		return false
	}
	tt.mu.Lock()
	t := tt.tasks[p.TaskID]
	tt.mu.Unlock()
	if t == nil {
		s.replyError(msg.ID, -32602, "Task not found", `{"taskId":`+quote(p.TaskID)+`}`)
		return true
	}
	switch msg.Method {
	case "tasks/get":
		tt.mu.Lock()
		s.reply(msg.ID, t.json())
		tt.mu.Unlock()
	case "tasks/cancel":
		tt.mu.Lock()
		if t.status == "working" {
			t.status = "cancelled"
			close(t.done)
		}
		res := t.json()
		tt.mu.Unlock()
		s.reply(msg.ID, res)
	case "tasks/result":
		go func() {
			<-t.done
			tt.mu.Lock()
			defer tt.mu.Unlock()
			if t.status != "completed" {
				s.replyError(msg.ID, -32602, "Task "+t.status, "")
				return
			}
			res := t.result[:len(t.result)-1] + `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":` + quote(t.id) + `}}}`
			s.reply(msg.ID, res)
		}()
	}
	return true
}

// memberOf returns obj's member name, raw, or nil.
func memberOf(obj json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(obj, &m)
	return m[name]
}

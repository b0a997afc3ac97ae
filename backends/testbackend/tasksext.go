package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The tasks extension of 2026-07-28 (-tasks-ext): SEP-2663,
// io.modelcontextprotocol/tasks. The server answers server/discover (it
// speaks 2026-07-28 to whoever asks, and 2025-11-25 to whoever
// initializes), declares the extension, and lists the fixtures the
// official conformance suite's tasks scenarios name:
//
//	greet {name}                  sync only: "Hello, NAME!"
//	slow_compute {seconds, label} task optional: sleeps, then "LABEL: done"
//	failing_job {}                task required: completes with isError
//	                              true after failDelay
//	protocol_error_job {}         task optional: fails with a JSON-RPC
//	                              error (-32603)
//	confirm_delete {filename}     task optional: asks one elicitation, then
//	                              "Deleted FILE" (or "Kept FILE")
//	multi_input {}                task optional: asks two elicitations at once
//	test_tool_with_task {}        task required: asks user_name by
//	                              input_required first, then creates a task
//	                              whose result greets the name
//
// A call creates a task when the request's client capabilities declare the
// extension (its _meta's, or, in the handshake era, initialize's) and the
// tool supports tasks: the answer is a flat CreateTaskResult. A tool that
// requires tasks answers -32021 without the extension; the others run in
// the call, and those that ask answer input_required (multi-round-trip,
// the answers so far in requestState). tasks/get (the detailed task,
// result or error inlined), tasks/update (inputResponses; a partial set
// leaves the task input_required with the keys still open) and tasks/cancel
// (an empty ack, also for a task already ended) need the extension in the
// request, else -32021; an unknown task id is -32602. tasks/result and
// tasks/list do not exist (-32601). Task ids are random (128 bits), or
// with -task-ids seq "task-1", "task-2", ... (guessable, for tests that
// check the gateway does not let a guess through).

// tasksExtension is the extension's name in capabilities.extensions.
const tasksExtension = "io.modelcontextprotocol/tasks"

// missingTasksExtension is the -32021 error's data.
const missingTasksExtension = `{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`

// failDelay is how long failing_job and protocol_error_job work before they
// fail.
const failDelay = 200 * time.Millisecond

// extTool is one fixture of -tasks-ext.
type extTool struct {
	support string // "", "optional" or "required": execution.taskSupport
	schema  string
	// step is the tool's work given its arguments and the answers to its
	// input requests so far: the input requests still open (key → request),
	// or else its result (a CallToolResult) or its JSON-RPC error, after
	// delay.
	step  func(args json.RawMessage, answers map[string]json.RawMessage) (need map[string]string, result, rpcErr string)
	delay func(args json.RawMessage) time.Duration
}

// extTools are the fixtures, by name.
var extTools = map[string]extTool{
	"greet": {
		schema: `{"type":"object","properties":{"name":{"type":"string"}}}`,
		step: func(args json.RawMessage, _ map[string]json.RawMessage) (map[string]string, string, string) {
			return nil, text("Hello, " + stringMember(args, "name") + "!"), ""
		},
	},
	"slow_compute": {
		support: "optional",
		schema:  `{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`,
		step: func(args json.RawMessage, _ map[string]json.RawMessage) (map[string]string, string, string) {
			return nil, text(stringMember(args, "label") + ": done"), ""
		},
		delay: func(args json.RawMessage) time.Duration {
			var a struct {
				Seconds float64 `json:"seconds"`
			}
			json.Unmarshal(args, &a)
			return time.Duration(a.Seconds * float64(time.Second))
		},
	},
	"failing_job": {
		support: "required",
		schema:  `{"type":"object"}`,
		step: func(json.RawMessage, map[string]json.RawMessage) (map[string]string, string, string) {
			return nil, `{"content":[{"type":"text","text":"the job failed"}],"isError":true}`, ""
		},
		delay: func(json.RawMessage) time.Duration { return failDelay },
	},
	"protocol_error_job": {
		support: "optional",
		schema:  `{"type":"object"}`,
		step: func(json.RawMessage, map[string]json.RawMessage) (map[string]string, string, string) {
			return nil, "", `{"code":-32603,"message":"protocol_error_job failed on purpose"}`
		},
		delay: func(json.RawMessage) time.Duration { return failDelay },
	},
	"confirm_delete": {
		support: "optional",
		schema:  `{"type":"object","properties":{"filename":{"type":"string"}}}`,
		step: func(args json.RawMessage, answers map[string]json.RawMessage) (map[string]string, string, string) {
			file := stringMember(args, "filename")
			a, ok := answers["confirm"]
			if !ok {
				return map[string]string{"confirm": elicit("Delete "+file+"?", `{"confirm":{"type":"boolean"}}`)}, "", ""
			}
			if accepted(a) && string(memberOf(memberOf(a, "content"), "confirm")) == "true" {
				return nil, text("Deleted " + file), ""
			}
			return nil, text("Kept " + file), ""
		},
	},
	"multi_input": {
		support: "optional",
		schema:  `{"type":"object"}`,
		step: func(_ json.RawMessage, answers map[string]json.RawMessage) (map[string]string, string, string) {
			need := map[string]string{}
			for _, k := range []string{"first", "second"} {
				if _, ok := answers[k]; !ok {
					need[k] = elicit("Your "+k+" name?", `{"name":{"type":"string"},"confirm":{"type":"boolean"}}`)
				}
			}
			if len(need) > 0 {
				return need, "", ""
			}
			return nil, text("Got " + stringMember(memberOf(answers["first"], "content"), "name") + " and " + stringMember(memberOf(answers["second"], "content"), "name")), ""
		},
	},
	"test_tool_with_task": {
		support: "required",
		schema:  `{"type":"object"}`,
		step: func(_ json.RawMessage, answers map[string]json.RawMessage) (map[string]string, string, string) {
			a, ok := answers["user_name"]
			if !ok {
				return map[string]string{"user_name": elicit("Your name?", `{"name":{"type":"string"}}`)}, "", ""
			}
			return nil, text("Hello, " + stringMember(memberOf(a, "content"), "name") + "!"), ""
		},
	},
}

// extToolNames are the fixtures in listing order.
var extToolNames = []string{"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}

// elicit is an elicitation/create input request asking message with a
// form of properties.
func elicit(message, properties string) string {
	return `{"method":"elicitation/create","params":{"mode":"form","message":` + quote(message) + `,"requestedSchema":{"type":"object","properties":` + properties + `}}}`
}

// accepted reports whether an elicitation's answer accepts.
func accepted(answer json.RawMessage) bool {
	return stringMember(answer, "action") == "accept"
}

// extToolDefs are the fixtures' definitions, as tools/list writes them.
func extToolDefs() []string {
	var out []string
	for _, n := range extToolNames {
		t := extTools[n]
		execution := ""
		if t.support != "" {
			execution = `,"execution":{"taskSupport":` + quote(t.support) + `}`
		}
		out = append(out, `{"name":`+quote(n)+`,"description":`+quote("testbackend tasks fixture "+n)+`,"inputSchema":`+t.schema+execution+`}`)
	}
	return out
}

// extTask is one task of -tasks-ext.
type extTask struct {
	id      string
	status  string // working, input_required, completed, failed, cancelled
	created time.Time
	updated time.Time
	result  string            // completed: the CallToolResult
	err     string            // failed: the JSON-RPC error
	asks    map[string]string // input_required: the requests still open
	answers map[string]json.RawMessage
	args    json.RawMessage
	tool    extTool
	cancel  chan struct{} // closed when cancelled
}

// extTable holds the tasks of -tasks-ext.
type extTable struct {
	mu    sync.Mutex
	seq   bool // -task-ids seq
	next  int
	tasks map[string]*extTask
}

func (x *extTable) newID() string {
	if x.seq {
		x.next++
		return "task-" + strconv.Itoa(x.next)
	}
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// final reports whether a status ends the task.
func final(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// json is the task object; detailed: as tasks/get answers it, with its
// result, error or open input requests. x.mu is held.
func (t *extTask) json(detailed bool) string {
	var b strings.Builder
	b.WriteString(`{"taskId":` + quote(t.id) + `,"status":` + quote(t.status))
	b.WriteString(`,"createdAt":` + quote(t.created.UTC().Format(time.RFC3339Nano)) + `,"lastUpdatedAt":` + quote(t.updated.UTC().Format(time.RFC3339Nano)))
	b.WriteString(`,"ttlMs":60000,"pollIntervalMs":50`)
	if detailed {
		switch t.status {
		case "completed":
			b.WriteString(`,"result":` + t.result)
		case "failed":
			b.WriteString(`,"error":` + t.err)
		case "input_required":
			b.WriteString(`,"inputRequests":{`)
			for i, k := range slices.Sorted(maps.Keys(t.asks)) {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(quote(k) + `:` + t.asks[k])
			}
			b.WriteString(`}`)
		}
	}
	b.WriteString(`}`)
	return b.String()
}

// advance moves a task on after its answers changed: to input_required
// with the requests still open, or to working, and then, after the tool's
// delay, to its end. x.mu is held.
func (x *extTable) advance(t *extTask) {
	need, result, rpcErr := t.tool.step(t.args, t.answers)
	t.updated = time.Now()
	if len(need) > 0 {
		t.status, t.asks = "input_required", need
		return
	}
	t.status, t.asks = "working", nil
	var delay time.Duration
	if t.tool.delay != nil {
		delay = t.tool.delay(t.args)
	}
	go func() {
		select {
		case <-time.After(delay):
		case <-t.cancel:
			return
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		if t.status != "working" {
			return
		}
		t.updated = time.Now()
		if rpcErr != "" {
			t.status, t.err = "failed", rpcErr
		} else {
			t.status, t.result = "completed", result
		}
	}()
}

// declaresTasks reports whether a request declares the extension: in its
// _meta's client capabilities, else (the handshake era) in initialize's.
func (s *server) declaresTasks(params json.RawMessage) bool {
	caps := memberOf(memberOf(params, "_meta"), "io.modelcontextprotocol/clientCapabilities")
	if caps == nil {
		s.mu.Lock()
		caps = s.clientCaps
		s.mu.Unlock()
	}
	return len(memberOf(memberOf(caps, "extensions"), tasksExtension)) > 0
}

// discover answers server/discover: 2026-07-28, the extension declared.
func (s *server) discover(msg message) {
	caps := `"tools":{},"extensions":{"` + tasksExtension + `":{}}`
	if s.prompts || s.asks {
		caps += `,"prompts":{}`
	}
	if s.resources || s.asks {
		caps += `,"resources":{}`
	}
	info := `{"name":` + quote(s.name) + `,"version":"1.0.0"}`
	s.reply(msg.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{`+caps+`},"serverInfo":`+info+`,"resultType":"complete","ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":`+info+`}}`)
}

// serveTasksExt serves server/discover, the fixtures' tools/calls and
// tasks/get, tasks/update and tasks/cancel; it reports false for anything
// else.
func (s *server) serveTasksExt(msg message) bool {
	switch msg.Method {
	case "server/discover":
		s.discover(msg)
		return true
	case "tasks/get", "tasks/update", "tasks/cancel":
		s.taskRequest(msg)
		return true
	case "tools/call":
	default:
		return false
	}
	var p struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		Meta           json.RawMessage            `json:"_meta"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   string                     `json:"requestState"`
	}
	json.Unmarshal(msg.Params, &p)
	tool, ok := extTools[p.Name]
	if !ok {
		return false
	}
	s.mu.Lock()
	s.lastMeta = p.Meta
	s.mu.Unlock()
	ext := s.declaresTasks(msg.Params)
	if tool.support == "required" && !ext {
		s.replyError(msg.ID, -32021, "Missing required client capability: "+tasksExtension, missingTasksExtension)
		return true
	}
	// The answers so far: those of earlier rounds (requestState) and this
	// one's.
	answers := map[string]json.RawMessage{}
	if raw, err := base64.RawURLEncoding.DecodeString(p.RequestState); err == nil && len(raw) > 0 {
		json.Unmarshal(raw, &answers)
	}
	maps.Copy(answers, p.InputResponses)
	if tool.support != "" && ext && p.Name != "test_tool_with_task" {
		s.createTask(msg, tool, p.Arguments, answers)
		return true
	}
	need, _, _ := tool.step(p.Arguments, answers)
	if len(need) > 0 {
		// Multi-round-trip: the client answers and calls again with the
		// answers so far.
		state, _ := json.Marshal(answers)
		var reqs []string
		for _, k := range slices.Sorted(maps.Keys(need)) {
			reqs = append(reqs, quote(k)+`:`+need[k])
		}
		s.reply(msg.ID, `{"resultType":"input_required","inputRequests":{`+strings.Join(reqs, ",")+`},"requestState":`+quote(base64.RawURLEncoding.EncodeToString(state))+`}`)
		return true
	}
	if p.Name == "test_tool_with_task" {
		// Its input gathered, the tool goes on as a task.
		s.createTask(msg, tool, p.Arguments, answers)
		return true
	}
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		s.runSync(msg, tool, p.Arguments, answers)
	}()
	return true
}

// createTask answers a tools/call with a new task (a flat CreateTaskResult).
func (s *server) createTask(msg message, tool extTool, args json.RawMessage, answers map[string]json.RawMessage) {
	x := &s.extTable
	x.mu.Lock()
	now := time.Now()
	t := &extTask{id: x.newID(), created: now, tool: tool, args: args, answers: answers, cancel: make(chan struct{})}
	if x.tasks == nil {
		x.tasks = map[string]*extTask{}
	}
	x.tasks[t.id] = t
	x.advance(t)
	created := t.json(false)
	x.mu.Unlock()
	s.reply(msg.ID, `{"resultType":"task",`+created[1:])
}

// runSync runs a fixture within its call, cancellable by
// notifications/cancelled.
func (s *server) runSync(msg message, tool extTool, args json.RawMessage, answers map[string]json.RawMessage) {
	cancel, done := s.cancellable(msg.ID)
	defer done()
	if tool.delay != nil {
		select {
		case <-time.After(tool.delay(args)):
		case <-cancel:
			return
		}
	}
	_, result, rpcErr := tool.step(args, answers)
	if rpcErr != "" {
		s.send(`{"jsonrpc":"2.0","id":` + s.echoID(msg.ID) + `,"error":` + rpcErr + `}`)
		return
	}
	s.reply(msg.ID, result)
}

// taskRequest serves tasks/get, tasks/update and tasks/cancel.
func (s *server) taskRequest(msg message) {
	if !s.declaresTasks(msg.Params) {
		s.replyError(msg.ID, -32021, "Missing required client capability: "+tasksExtension, missingTasksExtension)
		return
	}
	var p struct {
		TaskID         string          `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		s.replyError(msg.ID, -32602, "bad params: "+err.Error(), "")
		return
	}
	x := &s.extTable
	x.mu.Lock()
	t := x.tasks[p.TaskID]
	if t == nil {
		x.mu.Unlock()
		s.replyError(msg.ID, -32602, "Task not found", `{"taskId":`+quote(p.TaskID)+`}`)
		return
	}
	var res string
	switch msg.Method {
	case "tasks/get":
		res = `{"resultType":"complete",` + t.json(true)[1:]
	case "tasks/update":
		var responses map[string]json.RawMessage
		if err := json.Unmarshal(p.InputResponses, &responses); err != nil || responses == nil {
			x.mu.Unlock()
			s.replyError(msg.ID, -32602, fmt.Sprintf("inputResponses must be an object, not %s", p.InputResponses), "")
			return
		}
		answered := false
		for k, v := range responses {
			if _, open := t.asks[k]; open && t.status == "input_required" {
				t.answers[k] = v
				answered = true
			}
		}
		if answered {
			x.advance(t)
		}
		res = `{"resultType":"complete"}`
	case "tasks/cancel":
		if !final(t.status) {
			t.status, t.asks, t.updated = "cancelled", nil, time.Now()
			close(t.cancel)
		}
		res = `{"resultType":"complete"}`
	}
	x.mu.Unlock()
	s.reply(msg.ID, res)
}

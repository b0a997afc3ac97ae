package main

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// Tasks pass through: the tasks capability and each tool's execution reach
// the client, params.task reaches the backend, and tasks/get, tasks/result
// and tasks/cancel go to the backend that created the task, tasks/list to
// every backend; the backend's notifications/tasks/status reaches the
// client.
func TestTasksRoutedToTheirBackend(t *testing.T) {
	t.Parallel()
	s, init := initSession(t, startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("a", "-tasks", "-name", "a"), tb("b", "-tasks", "-name", "b"))), "e2e", `{}`)
	caps, _ := init.Result(t)["capabilities"].(map[string]any)
	if tasks, _ := caps["tasks"].(map[string]any); tasks["list"] == nil || tasks["cancel"] == nil || tasks["requests"] == nil {
		t.Errorf("capabilities.tasks: %v", caps["tasks"])
	}
	var listed struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(s.Call("tools/list", `{}`).Member("result"), &listed); err != nil || len(listed.Tools) == 0 {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tool := range listed.Tools {
		if canonical(tool.Execution) != `{"taskSupport":"optional"}` {
			t.Errorf("%s: execution %s", tool.Name, tool.Execution)
		}
	}

	taskOf := func(server, args string) map[string]any {
		t.Helper()
		r := s.Call("tools/call", `{"name":"`+server+`.echo","arguments":`+args+`,"task":{"ttl":60000}}`)
		task, _ := r.Result(t)["task"].(map[string]any)
		if task == nil {
			t.Fatalf("%s.echo as a task: %s", server, r)
		}
		return task
	}
	mark := s.Mark()
	a := taskOf("a", `{"ms":20,"k":"a"}`)
	b := taskOf("b", `{"ms":20,"k":"b"}`)
	if a["taskId"] != "a-1" || b["taskId"] != "b-1" || a["status"] != "working" {
		t.Fatalf("created tasks %v and %v", a, b)
	}
	if r := s.Call("tasks/result", `{"taskId":"b-1"}`).Result(t); canonical(json.RawMessage(mustJSON(t, r["structuredContent"]))) != `{"k":"b","ms":20}` {
		t.Errorf("tasks/result b-1: %v", r)
	}
	if r := s.Call("tasks/get", `{"taskId":"a-1"}`).Result(t); r["taskId"] != "a-1" {
		t.Errorf("tasks/get a-1: %v", r)
	}
	status := s.WaitNote(mark, "notifications/tasks/status", testutil.DefaultTimeout)
	if p, _ := status.Map()["params"].(map[string]any); p["status"] != "completed" {
		t.Errorf("task status notification: %s", status)
	}
	slow := taskOf("a", `{"ms":60000}`)
	if r := s.Call("tasks/cancel", `{"taskId":`+mustJSON(t, slow["taskId"])+`}`).Result(t); r["status"] != "cancelled" {
		t.Errorf("tasks/cancel: %v", r)
	}
	var list struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(s.Call("tasks/list", `{}`).Member("result"), &list); err != nil || len(list.Tasks) != 3 {
		t.Errorf("tasks/list: %+v, %v", list, err)
	}
	if code, _, _ := s.Call("tasks/get", `{"taskId":"nobody-1"}`).Error(t); code != -32602 {
		t.Errorf("tasks/get of an unknown task: code %d", code)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

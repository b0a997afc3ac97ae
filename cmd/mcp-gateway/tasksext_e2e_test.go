package main

import (
	"testing"
)

// A client of the handshake era that declares the tasks extension of
// 2026-07-28 in initialize does not get tasks of that design: the gateway
// serves the extension to requests of 2026-07-28 only, so it does not tell
// the backends of it, whether they are spoken to in 2025-11-25 (told at
// their initialize) or in 2026-07-28 (told in each request's _meta). A
// call of a tool that may run as a task answers at once.
func TestTasksExtensionNotForHandshakeClients(t *testing.T) {
	t.Parallel()
	caps := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, protocol := range []string{"auto", "2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			be := tb("tasks", "-tasks-ext")
			be.Protocol = protocol
			s, init := initSession(t, startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, be)), "e2e", caps)
			if ext := init.Result(t)["capabilities"].(map[string]any)["extensions"]; ext != nil {
				t.Errorf("initialize declared extensions %v", ext)
			}
			r := s.callTool("tasks.slow_compute", `{"seconds":0,"label":"x"}`).Result(t)
			content, _ := r["content"].([]any)
			if len(content) != 1 || content[0].(map[string]any)["text"] != "x: done" || r["taskId"] != nil {
				t.Errorf("slow_compute: %v", r)
			}
		})
	}
}

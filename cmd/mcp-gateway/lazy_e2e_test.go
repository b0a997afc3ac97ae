package main

// Lazy mode (gateway.tools_mode: lazy) through the binary: the meta tools
// as listed, find_tools' ranked answer, and the two call tools.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

func lazyConfig(t *testing.T, servers ...beServer) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false, "tools_mode": "lazy"},
		"servers": servers,
	})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.TempFile(t, "config.yaml", string(b))
}

// metaResult is a meta tool's answer: its one text content, decoded.
func metaResult(t *testing.T, r testutil.Msg) map[string]any {
	t.Helper()
	res := r.Result(t)
	content, _ := res["content"].([]any)
	if len(content) != 1 || res["structuredContent"] != nil || res["isError"] == true {
		t.Fatalf("want one text content only: %s", r)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(content[0].(map[string]any)["text"].(string)), &out); err != nil {
		t.Fatalf("text is not JSON: %s", r)
	}
	return out
}

func foundNames(t *testing.T, res map[string]any) []string {
	t.Helper()
	var names []string
	for _, tool := range res["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// The meta tools are listed with annotations that say what each does:
// find_tools and describe_tool read only the gateway's own tables (a closed
// world), call_tool_read calls only read-only tools, and call_tool and
// run_script may do anything, so a client that asks before tools with
// effects asks for them.
func TestLazyMetaToolAnnotations(t *testing.T) {
	t.Parallel()
	s := startRaw(t, lazyConfig(t, tb("tb")), "e2e")
	tools := s.Call("tools/list", `{}`).Result(t)["tools"].([]any)
	got := make(map[string]string)
	for _, tool := range tools {
		m := tool.(map[string]any)
		ann, _ := json.Marshal(m["annotations"])
		got[m["name"].(string)] = string(ann)
	}
	lookup := `{"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true}`
	want := map[string]string{
		"gateway.find_tools":     lookup,
		"gateway.describe_tool":  lookup,
		"gateway.call_tool":      `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false}`,
		"gateway.call_tool_read": `{"destructiveHint":false,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":true}`,
		"gateway.run_script":     `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false}`,
	}
	if !maps.Equal(got, want) {
		t.Errorf("listed annotations:\n got %v\nwant %v", got, want)
	}
}

// find_tools ranks: the best match first, whatever the other words; a
// server filter and a limit; an answer with no match says what to try; a
// query of more distinct words than the index takes is refused with
// -32602 rather than costing words × tools.
func TestLazyFindTools(t *testing.T) {
	t.Parallel()
	s := startRaw(t, lazyConfig(t, tb("tb"), tb("other")), "e2e")
	find := func(args string) map[string]any {
		t.Helper()
		return metaResult(t, s.callTool("gateway.find_tools", args))
	}
	if got := foundNames(t, find(`{"query":"I need the tool that can ECHO what I send, on tb."}`)); len(got) == 0 || got[0] != "tb.echo" {
		t.Errorf("echo on tb = %v, want tb.echo first", got)
	}
	if got := foundNames(t, find(`{"query":"tb.sl"}`)); len(got) == 0 || got[0] != "tb.slow" {
		t.Errorf("tb.sl = %v, want tb.slow first (a name's start)", got)
	}
	other := foundNames(t, find(`{"query":"echo","server":"other"}`))
	if len(other) == 0 || other[0] != "other.echo" || slices.ContainsFunc(other, func(n string) bool { return !strings.HasPrefix(n, "other.") }) {
		t.Errorf("echo on other = %v", other)
	}
	if got := foundNames(t, find(`{"query":"testbackend tool","limit":3}`)); len(got) != 3 {
		t.Errorf("limit 3: %v", got)
	}
	if got := foundNames(t, find(`{}`)); len(got) != 8 {
		t.Errorf("no query: %d tools, want the first 8", len(got))
	}
	none := find(`{"query":"zzzz qqqq"}`)
	if len(none["tools"].([]any)) != 0 || !strings.Contains(none["hint"].(string), "Servers: other, tb.") {
		t.Errorf("no match: %v", none)
	}
	r := s.callTool("gateway.find_tools", `{"query":"`+many(40)+`"}`)
	if errCode(r.Map()) != -32602 || !strings.Contains(r.String(), "more than 32 distinct words") {
		t.Errorf("40 distinct words: %s, want -32602", r)
	}
}

func many(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%d ", i)
	}
	return b.String()
}

// call_tool_read calls a tool whose own annotations say read-only, and
// refuses any other, naming call_tool; call_tool calls any. describe_tool
// gives the whole definition. Over real npm servers, with a strict client's
// names.
func TestLazyCallTools(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	mem := nodeServer(root, "memory", "server-memory")
	mem.Env = map[string]string{"MEMORY_FILE_PATH": memFile}
	s := startRaw(t, lazyConfig(t, nodeServer(root, "everything", "server-everything", "stdio"), mem, tb("tb")), "claude-code")

	found := metaResult(t, s.callTool("gateway__find_tools", `{"query":"store new entities in the knowledge graph"}`))
	if got := foundNames(t, found); len(got) == 0 || got[0] != "memory__create_entities" {
		t.Errorf("find = %v, want memory__create_entities first", got)
	}
	def := metaResult(t, s.callTool("gateway__describe_tool", `{"name":"memory__create_entities"}`))
	if def["name"] != "memory__create_entities" || def["inputSchema"] == nil || def["annotations"] == nil {
		t.Errorf("describe_tool = %v", def)
	}

	read := s.callTool("gateway__call_tool_read", `{"name":"everything__echo","arguments":{"message":"read only"}}`)
	if !strings.Contains(read.String(), "Echo: read only") {
		t.Errorf("call_tool_read everything__echo = %s", read)
	}
	for _, name := range []string{"memory__create_entities", "tb__echo"} { // not read-only; no annotations
		r := s.callTool("gateway__call_tool_read", `{"name":"`+name+`","arguments":{"entities":[]}}`)
		if errCode(r.Map()) != -32602 || !strings.Contains(r.String(), name+" is not marked read-only: call it with gateway__call_tool") {
			t.Errorf("call_tool_read %s = %s, want -32602", name, r)
		}
	}
	if _, err := os.Stat(memFile); !os.IsNotExist(err) {
		t.Errorf("memory file after a refused call: %v", err)
	}
	if r := s.callTool("gateway__call_tool_read", `{"name":"gateway__call_tool","arguments":{}}`); errCode(r.Map()) != -32602 {
		t.Errorf("call_tool_read of a meta tool = %s", r)
	}
	write := s.callTool("gateway__call_tool", `{"name":"memory__create_entities","arguments":{"entities":[{"name":"gw","entityType":"project","observations":["lazy"]}]}}`)
	if !strings.Contains(write.String(), `gw`) || write.Map()["error"] != nil {
		t.Errorf("call_tool memory__create_entities = %s", write)
	}
	if _, err := os.Stat(memFile); err != nil {
		t.Errorf("memory file after call_tool: %v", err)
	}
}

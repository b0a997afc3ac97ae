package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Lazy tool listing (gateway.tools_mode: lazy, docs/configuration.md): tools/list shows
// the answer tools and three meta tools; the backends' tools stay callable
// by name and are found and described through the meta tools.
const (
	metaFind     = "find_tools"
	metaDescribe = "describe_tool"
	metaCall     = "call_tool"
)

// metaTools returns the meta tools under this naming mode, keyed by their
// own (mode-independent) names.
func metaTools(n namer) map[string]*mcp.Tool {
	name := func(own string) string { return n.name("gateway", own) }
	tools := []*mcp.Tool{{
		Name:        name(metaFind),
		Description: "Search the gateway's backend tools by words in their name or description; returns each match's name and one-line description. Call with no arguments to list every tool.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Words to match (all must appear)."},"server":{"type":"string","description":"Only tools of this backend server."}}}`),
	}, {
		Name:        name(metaDescribe),
		Description: "Return one backend tool's full definition, including its input schema, before calling it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, {
		Name:        name(metaCall),
		Description: "Call a backend tool by the name gateway find_tools returned, with its arguments.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"]}`),
	}}
	return map[string]*mcp.Tool{metaFind: tools[0], metaDescribe: tools[1], metaCall: tools[2]}
}

// lazyListed keeps what lazy mode lists: everything but backend tools.
func lazyListed(all map[string]toolRoute) map[string]toolRoute {
	out := make(map[string]toolRoute)
	for name, r := range all {
		if r.kind != backendTool {
			out[name] = r
		}
	}
	return out
}

// callMeta serves the meta tool whose own name is which (metaFind, ...).
// call_tool forwards the client's _meta and progress like a direct call.
func (f *front) callMeta(ctx context.Context, which string, tc toolCall, notify func(*mcp.ProgressNotificationParams)) (json.RawMessage, error) {
	var args struct {
		Query     string          `json:"query"`
		Server    string          `json:"server"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if a := bytes.TrimSpace(tc.args); len(a) > 0 {
		if err := json.Unmarshal(a, &args); err != nil {
			return nil, errInvalidParams("arguments: " + err.Error())
		}
	}
	f.settle(ctx)
	switch which {
	case metaFind:
		words, ok := queryWords(args.Query)
		if !ok {
			return nil, errInvalidParams(fmt.Sprintf("query has more than %d distinct words", maxFindWords))
		}
		f.mu.Lock()
		ix := f.findIndex
		f.mu.Unlock()
		if ix == nil {
			ix = newToolIndex(nil)
		}
		found, err := ix.find(ctx, words, args.Server)
		if err != nil {
			return nil, err
		}
		return marshalResult(structured(map[string]any{"tools": found}))
	case metaDescribe:
		r, ok := f.lookupTool(args.Name)
		if !ok || r.kind != backendTool {
			return nil, &notFoundError{kindTool, args.Name}
		}
		return marshalResult(structured(r.def))
	}
	// call_tool: the same routing as a direct call, orphans included.
	if r, ok := f.resolve(ctx, args.Name); ok && r.kind == metaTool {
		return nil, &notFoundError{kindTool, args.Name}
	}
	return f.callTool(ctx, toolCall{name: args.Name, args: args.Arguments, meta: tc.meta}, notify)
}

type foundTool struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Description string `json:"description"`
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	const max = 160
	if len(s) > max {
		s = truncate(s, max-3) + "..."
	}
	return s
}

// structured returns v as a tool result: JSON text plus structuredContent.
func structured(v any) *mcp.CallToolResult {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	raw := json.RawMessage(bytes.TrimSpace(buf.Bytes()))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: raw}
}

package gateway

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/tsdecl"
)

// Code mode's side of the lazy tools: find_tools and describe_tool with
// format "ts" answer with TypeScript declarations of the tools
// (gateway/internal/tsdecl), which a model writes a script against, in
// place of JSON. The default stays JSON, as before.

const (
	formatJSON = "json"
	formatTS   = "ts"
	// maxTSResult bounds a find_tools answer in TypeScript: the tools
	// past it are named, for describe_tool. One tool is declared
	// whatever its size (tsdecl bounds that).
	maxTSResult = 32 << 10
)

// formatSchema is the format member of find_tools' and describe_tool's
// input schemas, in code mode (metaTools).
const formatSchema = `"format":{"type":"string","enum":["json","ts"],"description":"ts: TypeScript declarations, to call the tools from a script (default json)."}`

// checkFormat is a meta tool's format argument, checked.
func checkFormat(format string) (string, error) {
	switch format {
	case "", formatJSON:
		return formatJSON, nil
	case formatTS:
		return formatTS, nil
	}
	return "", errInvalidParams(fmt.Sprintf("format must be %q or %q, not %q", formatJSON, formatTS, format))
}

// tsTool is a tool definition (as listed) made a tsdecl.Tool; ok is
// false for a definition that does not decode, which the gateway never
// lists.
func tsTool(def json.RawMessage) (tsdecl.Tool, bool) {
	var t struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(def, &t) != nil {
		return tsdecl.Tool{}, false
	}
	return tsdecl.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}, true
}

// tsFound is find_tools' answer in TypeScript: the declarations of the
// found tools, best first, as many as fit in maxTSResult, the rest named;
// hint, when there is one, as a comment. A tool's description is its
// first line, as in JSON; describe_tool gives the whole. How a script
// calls the tools, and what it gets, is run_script's description's to
// say, not every answer's.
func tsFound(ix *toolsearch.Index, found []toolsearch.Hit, hint string) json.RawMessage {
	var tools []tsdecl.Tool
	for _, f := range found {
		if def, ok := ix.Def(f.Name); ok {
			if t, ok := tsTool(def); ok {
				t.Description = f.Description // its first line, as in JSON
				tools = append(tools, t)
			}
		}
	}
	var b strings.Builder
	if hint != "" {
		b.WriteString("// " + lineBreaks.Replace(hint) + "\n")
	}
	if len(tools) > 0 {
		decl, n := tsdecl.Declare(tools, maxTSResult)
		b.WriteString(decl)
		if n < len(tools) {
			var rest []string
			for _, t := range tools[n:] {
				rest = append(rest, fmt.Sprintf("%q", t.Name))
			}
			fmt.Fprintf(&b, "// Also found, not declared here (the answer's size): %s. Ask describe_tool for each.\n", strings.Join(rest, ", "))
		}
	}
	return textOnly(b.String())
}

// tsDescribed is describe_tool's answer in TypeScript.
func tsDescribed(def json.RawMessage) json.RawMessage {
	t, _ := tsTool(def)
	decl, _ := tsdecl.Declare([]tsdecl.Tool{t}, 0)
	return textOnly(decl)
}

// lineBreaks makes text one line, for a // comment.
var lineBreaks = strings.NewReplacer("\r", " ", "\n", " ", "\u2028", " ", "\u2029", " ")

// textOnly is a tool result whose one content is the text s. It is
// written here, not by the SDK's CallToolResult, whose encoder escapes <
// and > (six bytes each, in every Promise<...> a model reads).
func textOnly(s string) json.RawMessage {
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(mustJSON(s)) + `}]}`)
}

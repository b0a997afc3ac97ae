package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Lazy tool listing (gateway.tools_mode: lazy, docs/configuration.md): tools/list shows
// the answer tools and four meta tools; the backends' tools stay callable
// by name and are found, described and called through the meta tools.
const (
	metaFind     = "find_tools"
	metaDescribe = "describe_tool"
	metaCall     = "call_tool"
	metaCallRead = "call_tool_read"
)

// findLimit is how many tools find_tools returns unless asked, and
// maxFindLimit the most it returns when asked.
const (
	findLimit    = 8
	maxFindLimit = 50
)

// metaOrder is the order the meta tools are listed in.
var metaOrder = []string{metaFind, metaDescribe, metaCall, metaCallRead}

// metaTools returns the meta tools under this naming mode, keyed by their
// own (mode-independent) names. With code mode (run_script listed too),
// find_tools and describe_tool offer their format "ts": TypeScript
// declarations serve a script only, and without one the list stays as
// short as it was.
//
// Their annotations tell a client what each does, so that one that asks
// before a tool with effects (Codex with approval_policy = "never" refuses
// such a tool outright) asks exactly as it would for the backend tool
// itself: find_tools and describe_tool read the gateway's own tables
// (read-only, closed world); call_tool_read calls only tools whose own
// annotations say read-only, and says so; call_tool calls anything, so it
// says it may destroy and reach the open world, and a client asks every
// time (docs/configuration.md, "Lazy tool listing").
func metaTools(n namer, code bool) map[string]*mcp.Tool {
	name := func(own string) string { return n.name("gateway", own) }
	findTS, describeTS, format := "", "", ""
	if code {
		findTS = " With format \"ts\", returns the tools' TypeScript declarations instead, to call them from a script."
		describeTS = "; with format \"ts\", its TypeScript declaration"
		format = "," + formatSchema
	}
	yes, no := true, false
	lookup := &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}
	tools := []*mcp.Tool{{
		Name:  name(metaFind),
		Title: "Find tools",
		Description: "Find the backend tools for a need: describe it in words (\"take a screenshot of the page\") or give a tool's name or its start. " +
			"Returns the best matches first, each with its name, a one-line description, and its inputSchema when small (else get it with " + name(metaDescribe) + "). " +
			"Call a tool marked readOnly with " + name(metaCallRead) + ", any other with " + name(metaCall) + "." + findTS,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","description":"What the tool should do, in words; or a tool name or its start."},`+
			`"server":{"type":"string","description":"Only this backend server's tools."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"At most this many tools (default %d)."}`+
			format+`}}`, maxFindLimit, findLimit)),
		Annotations: lookup,
	}, {
		Name:        name(metaDescribe),
		Title:       "Describe a tool",
		Description: "Return one backend tool's full definition: its input schema, output schema and annotations" + describeTS + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}` + format + `},"required":["name"]}`),
		Annotations: lookup,
	}, {
		Name:  name(metaCall),
		Title: "Call a tool",
		Description: "Call a backend tool by the name " + name(metaFind) + " returned, with its arguments. " +
			"It may change things: for a tool marked readOnly use " + name(metaCallRead) + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes},
	}, {
		Name:  name(metaCallRead),
		Title: "Call a read-only tool",
		Description: "Call a backend tool that " + name(metaFind) + " marks readOnly, by name, with its arguments. " +
			"Other tools are refused: call them with " + name(metaCall) + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &yes},
	}}
	out := make(map[string]*mcp.Tool, len(tools))
	for i, own := range metaOrder {
		out[own] = tools[i]
	}
	return out
}

// metaArgs are the meta tools' arguments.
type metaArgs struct {
	Query     string          `json:"query"`
	Server    string          `json:"server"`
	Limit     *float64        `json:"limit"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Format    string          `json:"format"` // find_tools and describe_tool: formatJSON or formatTS
}

// metaArgsMembers are metaArgs' members, for wire.Ambiguous.
var metaArgsMembers = wire.Known{Names: []string{"query", "server", "limit", "name", "arguments", "format"}}

// callMeta serves the meta tool whose own name is which (metaFind, ...)
// for run. The call tools forward the client's _meta and progress like a
// direct call, and their call goes through run's steps (toolcall.go).
func (f *front) callMeta(ctx context.Context, run *callRun, which string, tc toolCall) (json.RawMessage, error) {
	if which == metaRunScript {
		return f.runScript(ctx, run, tc)
	}
	var args metaArgs
	if a := bytes.TrimSpace(tc.args); len(a) > 0 {
		// encoding/json matches members without case; the scopes, the
		// audit and the policy read the called tool's name exactly
		// (calledNames, recorder): a member only in another case ("nAme")
		// would be read by one and not the other.
		if amb := wire.Ambiguous(a, &metaArgsMembers); amb != nil {
			return nil, errInvalidParams("arguments: " + amb.Error())
		}
		if err := json.Unmarshal(a, &args); err != nil {
			return nil, errInvalidParams("arguments: " + err.Error())
		}
	}
	f.rebuild(ctx, settled)
	switch which {
	case metaFind:
		t, access := f.tables(), f.grant().access
		ix := t.findIndex
		var visible func(name string) bool
		if access != nil {
			// Only what the policy lets the client see is found.
			tools := t.tools
			visible = func(name string) bool {
				r, ok := tools[name]
				return ok && access.Allows(policy.Tool, r.server, r.own)
			}
		}
		if ix == nil {
			ix = toolsearch.New(nil, nil, nil)
		}
		return findTools(ctx, ix, args, visible)
	case metaDescribe:
		format, err := checkFormat(args.Format)
		if err != nil {
			return nil, err
		}
		r, ok := f.lookupTool(args.Name)
		if !ok {
			return nil, f.unknown(kindTool, args.Name)
		}
		if r.kind != backendTool {
			return nil, &notFoundError{kindTool, args.Name}
		}
		if format == formatTS {
			return tsDescribed(r.def), nil
		}
		return textResult(r.def), nil
	}
	// The caller's era, capabilities and span go along: the backend is
	// told what this request declared, a task it creates is sealed for
	// the caller, and its span is the request's child, as for a direct
	// call (session.go).
	call := toolCall{id: tc.id, name: args.Name, args: args.Arguments, meta: tc.meta, era: tc.era, caps: tc.caps, span: tc.span}
	// The same routing as a direct call, orphans included.
	r, ok := f.resolve(ctx, args.Name)
	if ok && r.kind == metaTool {
		return nil, &notFoundError{kindTool, args.Name}
	}
	if which == metaCallRead {
		if !ok {
			return nil, f.unknown(kindTool, args.Name)
		}
		// Read-only is what the server's live list says, not its
		// snapshot's: the route is made that one's first.
		var err error
		if r, err = f.liveRoute(ctx, args.Name, r); err != nil {
			return nil, err
		}
		if r.kind != backendTool || !readOnly(r) {
			return nil, errInvalidParams(fmt.Sprintf("%s is not marked read-only: call it with %s", args.Name, f.metaName(metaCall)))
		}
		// The route that was checked is the one called, even if the
		// tables change in between.
		return f.callBackend(ctx, run, args.Name, r, &call)
	}
	return f.callTool(ctx, run, call)
}

// metaName is a meta tool's front name for this client.
func (f *front) metaName(own string) string {
	return f.declared().naming.name("gateway", own)
}

// findTools answers gateway.find_tools from ix, with the tools visible
// reports true of (all when nil).
func findTools(ctx context.Context, ix *toolsearch.Index, args metaArgs, visible func(name string) bool) (json.RawMessage, error) {
	if !toolsearch.WithinWords(args.Query) {
		return nil, errInvalidParams(fmt.Sprintf("query has more than %d distinct words", toolsearch.MaxWords))
	}
	format, err := checkFormat(args.Format)
	if err != nil {
		return nil, err
	}
	q := toolsearch.Query{Query: args.Query, Server: args.Server, Limit: findLimit, Visible: visible}
	if args.Limit != nil {
		l := *args.Limit
		if l != math.Trunc(l) || l < 1 {
			return nil, errInvalidParams("limit must be a whole number of at least 1")
		}
		q.Limit = int(min(l, maxFindLimit))
	}
	var res struct {
		Tools []toolsearch.Hit `json:"tools"`
		Hint  string           `json:"hint,omitempty"`
	}
	if s := args.Server; s != "" && ix.Count(s, visible) == 0 {
		res.Tools = []toolsearch.Hit{}
		res.Hint = fmt.Sprintf("No server is named %q. Servers: %s.", s, serverList(ix, visible))
		if format == formatTS {
			return tsFound(ix, nil, res.Hint), nil
		}
		return textResult(mustJSON(res)), nil
	}
	found, err := ix.Find(ctx, q)
	if err != nil {
		return nil, err
	}
	res.Tools = found
	switch all := ix.Count(args.Server, visible); {
	case all == 0:
		res.Hint = "No backend tools are ready yet: try again shortly, or ask the user to run `mcp-gateway status`."
	case len(found) == 0:
		res.Hint = "No tool matched. Try other words for what the tool does (a verb and its object, like \"send message\" or \"read file\"), a tool name, " +
			"or no query to list tools. Servers: " + serverList(ix, visible) + "."
	case strings.TrimSpace(args.Query) == "" && all > len(found):
		res.Hint = fmt.Sprintf("The first %d of %d tools, by name. Give a query to find the tools for a need.", len(found), all)
	}
	if format == formatTS {
		return tsFound(ix, found, res.Hint), nil
	}
	return textResult(mustJSON(res)), nil
}

// serverList names the servers with a tool visible reports true of.
func serverList(ix *toolsearch.Index, visible func(string) bool) string {
	names := ix.Servers(visible)
	const max = 40
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
	}
	return strings.Join(names, ", ")
}

// newFindIndex is the find_tools index of routes' backend tools, reusing
// prev's analysis of the tools that did not change (toolsearch.New).
func newFindIndex(routes map[string]toolRoute, instructions map[string]string, prev *toolsearch.Index) *toolsearch.Index {
	docs := make([]toolsearch.Doc, 0, len(routes))
	for _, name := range sortedKeys(routes) {
		r := routes[name]
		if r.kind != backendTool || r.app.only {
			continue // an app-only tool is not the model's to find (apps.go)
		}
		docs = append(docs, toolsearch.Doc{Name: name, Own: r.own, Server: r.server, Def: r.def, Tool: r.tool, ReadOnly: readOnly(r)})
	}
	return toolsearch.New(docs, instructions, prev)
}

// readOnly reports whether a backend tool says it changes nothing: its
// annotations say read-only and do not also say destructive.
func readOnly(r toolRoute) bool {
	a := r.tool.Annotations
	return a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
}

func mustJSON(v any) json.RawMessage {
	raw, err := wire.Marshal(v)
	if err != nil {
		panic(err) // the gateway's own results are plain data
	}
	return raw
}

// textResult is a tool result whose one text content is the JSON text
// raw. The meta tools answer in text only, not also in structuredContent:
// every client gives a model a tool's text content, and a client that
// gives it both would give it everything twice; with no outputSchema, no
// client expects structured content of these tools.
func textResult(raw json.RawMessage) json.RawMessage {
	return mustJSON(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}})
}

// instructions maps each ready backend to the instructions it answered
// initialize with: find_tools searches them too.
func (g *Gateway) instructions() map[string]string {
	out := make(map[string]string)
	for _, in := range g.opts.Backends.Initialized() {
		out[in.Server] = in.Instructions
	}
	return out
}

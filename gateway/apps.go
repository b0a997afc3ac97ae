package gateway

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// MCP Apps (the io.modelcontextprotocol/ui extension) through the gateway
// (docs/transparency.md, "MCP Apps"). A tool's _meta.ui.resourceUri (and
// the older _meta["ui/resourceUri"]) names a ui:// resource, the app's
// HTML, which the host reads and renders; the app then calls its server's
// tools through the host by their own names. Several servers behind one
// gateway would make both ambiguous, so:
//
//   - a backend's ui:// URIs are shown as ui://SERVER/... (uiFront,
//     resources.go), in its resources, its templates and its tools' _meta
//     alike, and read back from that backend under its own URI;
//   - a tools/call of a name no tool has as its front name, which is the
//     own name of one tool of the backends with apps, calls that tool; one
//     that several such tools have is refused, naming them (lookupTool,
//     ambiguousError);
//   - a tool whose _meta.ui.visibility leaves out "model" (an app-only
//     tool) is listed only to clients that declared the extension — hosts
//     that render apps, and keep such tools from the model themselves —
//     and is never found by find_tools, whose answers go to the model.

// appMeta is what a tool's _meta says of it for MCP Apps.
type appMeta struct {
	ui   bool // it names a ui:// resource: its server has an app
	only bool // app-only: its visibility leaves out "model"
}

// appTool returns a tool definition (toolDef's) of server with its ui://
// resource URIs as clients are shown them (uiFront), and what its
// _meta.ui says. A definition without them is returned as it is.
func appTool(def json.RawMessage, server string) (json.RawMessage, appMeta) {
	var app appMeta
	if !bytes.Contains(def, []byte(`"_meta"`)) {
		return def, app
	}
	meta := wire.Member(def, "_meta")
	if !isObject(meta) {
		return def, app
	}
	var edits []uriEdit
	// shown notes the value v of def, if it is a ui:// URI of server's,
	// to be replaced by the URI clients are shown.
	shown := func(v json.RawMessage) {
		if e, ok := uiEdit(def, v, server); ok {
			edits = append(edits, e)
			app.ui = true
		}
	}
	if ui := wire.Member(meta, "ui"); isObject(ui) {
		var vis []string
		if json.Unmarshal(wire.Member(ui, "visibility"), &vis) == nil {
			app.only = len(vis) > 0 && !slices.Contains(vis, "model")
		}
		shown(wire.Member(ui, "resourceUri"))
	}
	shown(wire.Member(meta, "ui/resourceUri"))
	return spliceURIs(def, edits), app
}

// uriEdit is a ui:// URI value in a message, at offset at, n bytes long,
// to be replaced by with (the URI clients are shown, quoted).
type uriEdit struct {
	at, n int
	with  []byte
}

// uiEdit is the edit that shows the URI v holds, a value of msg (as wire's
// Member and EachElement return them: they point into msg), as uiFront
// makes it; ok is false when v is not a ui:// URI.
func uiEdit(msg, v json.RawMessage, server string) (uriEdit, bool) {
	own, ok := wire.Unquote(v)
	if !ok {
		return uriEdit{}, false
	}
	front, ok := uiFront(server, own)
	if !ok {
		return uriEdit{}, false
	}
	quoted, _ := json.Marshal(front)
	return uriEdit{at: cap(msg) - cap(v), n: len(v), with: quoted}, true
}

// spliceURIs returns msg with the edits made, in one copy; msg itself when
// there are none. Every other byte stays as it was.
func spliceURIs(msg json.RawMessage, edits []uriEdit) json.RawMessage {
	if len(edits) == 0 {
		return msg
	}
	slices.SortFunc(edits, func(a, b uriEdit) int { return a.at - b.at })
	size := len(msg)
	for _, e := range edits {
		size += len(e.with) - e.n
	}
	out := make([]byte, 0, size)
	last := 0
	for _, e := range edits {
		out = append(append(out, msg[last:e.at]...), e.with...)
		last = e.at + e.n
	}
	return append(out, msg[last:]...)
}

// appOwnNames maps the own name of each tool of the backends that have an
// app (one of their tools names a ui:// resource) to the front names of
// the tools that have it, in listing order: the names an app's calls use.
func appOwnNames(routes map[string]toolRoute, order []string) map[string][]string {
	apps := make(map[string]bool)
	for _, r := range routes {
		if r.kind == backendTool && r.app.ui {
			apps[r.server] = true
		}
	}
	if len(apps) == 0 {
		return nil
	}
	own := make(map[string][]string)
	for _, name := range order {
		if r := routes[name]; r.kind == backendTool && apps[r.server] {
			own[r.own] = append(own[r.own], name)
		}
	}
	return own
}

// ownCandidates are the front names of the app backends' tools whose own
// name is name.
// Only the names among the tables' tools that the client may see count,
// so that a name the front does not route to, or the policy or profile
// hides, is never reached, nor named, by its own name either.
func (f *front) ownCandidates(name string) []string {
	return f.ownCandidatesIn(f.tables(), name)
}

// ownCandidatesIn is ownCandidates in tables t.
func (f *front) ownCandidatesIn(t *tables, name string) []string {
	var out []string
	for _, front := range t.ownNames[name] {
		if r, ok := t.tools[front]; ok && f.allowed(r) {
			out = append(out, front)
		}
	}
	return out
}

// rendersApps reports whether a client's capabilities declare the MCP Apps
// extension: it renders apps, and keeps app-only tools from its model.
func rendersApps(caps json.RawMessage) bool {
	v := bytes.TrimSpace(wire.Member(wire.Member(caps, "extensions"), backends.AppsExtension))
	return len(v) > 0 && string(v) != "null"
}

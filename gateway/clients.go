package gateway

import "strings"

// What the gateway knows of particular clients beyond the alphabet of
// their names (names.go): how many tools one of their requests may carry,
// and the prefix they put before each tool's name (docs/clients.md,
// "Tools and names per client"). A client is recognised by its
// clientInfo.name, as for strict names.

// clientRule is what one client needs of the tool list.
type clientRule struct {
	match string // a substring of clientInfo.name, lower case
	// maxTools is the most tools the client sends a model in one request
	// (0: no cap): under tools_mode: auto it gets the meta tools instead
	// of a list longer than that.
	maxTools int
	// prefixed: the client shows a tool as mcp__ENTRY__NAME (ENTRY: the
	// gateway's entry in its configuration) and needs that within
	// maxStrictName characters.
	prefixed bool
}

// clientRules are looked up in order; the first whose match is in the
// client's name applies.
var clientRules = []clientRule{
	{match: "claude-code", prefixed: true}, // Claude Code
	{match: "cursor"},                      // Cursor ("cursor-vscode") is not VS Code
	{match: "visual studio code", maxTools: 128},
	{match: "vscode", maxTools: 128},
}

// ruleOf is the rule of a client by its clientInfo.name; the zero rule
// for a client the gateway knows nothing particular of.
func ruleOf(client string) clientRule {
	n := strings.ToLower(client)
	for _, r := range clientRules {
		if strings.Contains(n, r.match) {
			return r
		}
	}
	return clientRule{}
}

// entryPrefix is the prefix a prefixed client puts before each tool name.
func entryPrefix(entry string) string { return "mcp__" + entry + "__" }

// namerFor is the naming of a client's tools and prompts: strict names
// by gateway.strict_names, and under auto, within what the client's own
// prefix leaves of its limit.
func (g *Gateway) namerFor(client string) namer {
	gc := g.opts.Config.Gateway
	n := g.namer(strictMode(gc.StrictNames, client))
	if gc.StrictNames == "auto" && ruleOf(client).prefixed {
		n.max = min(n.limit(), maxStrictName-len(entryPrefix(gc.EntryName)))
	}
	return n
}

// namers are every naming some client gets: the names a request may
// call a tool by are in one of their tables.
func (g *Gateway) namers() []namer {
	out := []namer{g.namer(false), g.namer(true)}
	if gc := g.opts.Config.Gateway; gc.StrictNames == "auto" {
		n := g.namer(true)
		n.max = maxStrictName - len(entryPrefix(gc.EntryName))
		out = append(out, n)
	}
	return out
}

// maxToolsFor is the most tools a client's tools/list may hold before it
// lists the meta tools instead (tools_mode: auto); 0 for no cap.
func (g *Gateway) maxToolsFor(client string) int {
	if g.opts.Config.Gateway.ToolsMode != "auto" {
		return 0
	}
	return ruleOf(client).maxTools
}

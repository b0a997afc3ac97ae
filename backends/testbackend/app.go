package main

import (
	"encoding/json"
	"strings"
)

// An MCP App (-app): the tools show, whose _meta names the UI resource
// ui://app/view.html the new way and the old (_meta["ui/resourceUri"]),
// and poll, app-only (_meta.ui.visibility ["app"]); the resource itself,
// and a template ui://app/pages/{page}. Reading a ui:// URI answers
// appHTML for it, which names the server (-name), so that tests can tell
// two backends' apps apart byte for byte. The capabilities declare the
// extension.

// appURI is the app's UI resource.
const appURI = "ui://app/view.html"

// appMIME is MCP Apps' MIME type of a UI resource.
const appMIME = "text/html;profile=mcp-app"

// appTools are the app's tool definitions, as tools/list writes them.
func appTools() []string {
	return []string{
		`{"name":"show","description":"testbackend tool show (an app)","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":` + quote(appURI) + `},"ui/resourceUri":` + quote(appURI) + `}}`,
		`{"name":"poll","description":"testbackend tool poll (app-only)","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`,
	}
}

// appResource and appTemplate are the app's entries of resources/list and
// resources/templates/list.
const (
	appResource = `{"uri":"ui://app/view.html","name":"view","mimeType":"text/html;profile=mcp-app"}`
	appTemplate = `{"uriTemplate":"ui://app/pages/{page}","name":"pages","mimeType":"text/html;profile=mcp-app"}`
)

// appHTML is the HTML of the app's resource uri: it names the server and
// the URI, with bytes a re-encoding would change (escapes, odd spacing).
func (s *server) appHTML(uri string) string {
	return "<!doctype html>\n<title>" + s.name + "</title>\t<p data-uri=\"" + uri + "\">&amp; <b>\u2028</b></p>  \n"
}

// appRead answers resources/read of a ui:// URI: its contents, the uri as
// asked, with the resource's _meta.
func (s *server) appRead(uri string) string {
	return `{"contents":[{"uri":` + quote(uri) + `,"mimeType":"` + appMIME + `","text":` + quote(s.appHTML(uri)) + `,"_meta":{"ui":{"prefersBorder":true}}}]}`
}

// appCall answers the app's tools: who answered.
func (s *server) appCall(tool string) string {
	sc, _ := json.Marshal(map[string]string{"server": s.name, "tool": tool})
	return `{"content":[{"type":"text","text":` + quote(string(sc)) + `}],"structuredContent":` + string(sc) + `}`
}

// isAppURI reports whether uri is one of the app's.
func isAppURI(uri string) bool { return strings.HasPrefix(uri, "ui://") }

// stringMember is the string member name of params, or "".
func stringMember(params json.RawMessage, name string) string {
	var v string
	json.Unmarshal(memberOf(params, name), &v)
	return v
}

// clientRendersApps reports whether the client's initialize declared the
// MCP Apps extension.
func (s *server) clientRendersApps() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(memberOf(memberOf(s.clientCaps, "extensions"), "io.modelcontextprotocol/ui")) > 0
}

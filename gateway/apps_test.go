package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// uiCaps are the capabilities of a host that renders MCP Apps.
const uiCaps = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// appServer is a testbackend with an MCP App, whose HTML names it.
func appServer(name string) config.Server {
	return testServer(name, "-app", "-name", name)
}

// appHTML is what testbackend's app resource uri of server name reads
// (backends/testbackend/app.go), as the backend writes it on the wire.
func appHTML(name, uri string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode("<!doctype html>\n<title>" + name + "</title>\t<p data-uri=\"" + uri + "\">&amp; <b>\u2028</b></p>  \n")
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// list returns the items of a list method's result, by their key member
// (name, uri, uriTemplate).
func (c *rawClient) list(t *testing.T, method, field, key string) map[string]json.RawMessage {
	t.Helper()
	m := c.Call(method, `{}`)
	var res map[string][]json.RawMessage
	if err := json.Unmarshal(m.Member("result"), &res); err != nil {
		t.Fatalf("%s: %s", method, m)
	}
	out := make(map[string]json.RawMessage)
	for _, it := range res[field] {
		var k map[string]any
		json.Unmarshal(it, &k)
		out[k[key].(string)] = it
	}
	return out
}

// uiMeta is what a tool's _meta says for MCP Apps.
type uiMeta struct {
	Meta struct {
		UI struct {
			ResourceURI string   `json:"resourceUri"`
			Visibility  []string `json:"visibility"`
		} `json:"ui"`
		Legacy string `json:"ui/resourceUri"`
	} `json:"_meta"`
}

// Two backends publish the same ui:// URI: each is shown under its own
// server's name — in its tools' _meta (both forms), its resources and its
// templates — and read back from that backend, under the URI it knows, the
// HTML byte for byte. A backend's own URI is ambiguous, and the error says
// which to use; an unlisted ui://SERVER/ URI goes to SERVER.
func TestAppsDistinctUIResources(t *testing.T) {
	gw, ctx := newGateway(t, nil, appServer("a"), appServer("b"))
	c := serveRawWith(t, ctx, gw, uiCaps)

	tools := c.list(t, "tools/list", "tools", "name")
	for _, server := range []string{"a", "b"} {
		var m uiMeta
		json.Unmarshal(tools[server+".show"], &m)
		want := "ui://" + server + "/app/view.html"
		if m.Meta.UI.ResourceURI != want || m.Meta.Legacy != want {
			t.Errorf("%s.show's _meta: %s, want resourceUri and ui/resourceUri %s", server, tools[server+".show"], want)
		}
	}
	res := c.list(t, "resources/list", "resources", "uri")
	tmpl := c.list(t, "resources/templates/list", "resourceTemplates", "uriTemplate")
	for _, server := range []string{"a", "b"} {
		r, ok := res["ui://"+server+"/app/view.html"]
		if !ok || !bytes.Contains(r, []byte(`"mimeType":"text/html;profile=mcp-app"`)) {
			t.Errorf("resources/list: %s's view: %s (listed: %v)", server, r, slices.Sorted(maps.Keys(res)))
		}
		if _, ok := tmpl["ui://"+server+"/app/pages/{page}"]; !ok {
			t.Errorf("templates: no %s pages (listed: %v)", server, slices.Sorted(maps.Keys(tmpl)))
		}
	}

	for _, c2 := range []struct{ uri, server, own string }{
		{"ui://b/app/view.html", "b", "ui://app/view.html"},
		{"ui://a/app/view.html", "a", "ui://app/view.html"},
		{"ui://a/app/pages/7", "a", "ui://app/pages/7"}, // the template
		{"ui://b/unlisted.html", "b", "ui://unlisted.html"},
	} {
		m := c.Call("resources/read", `{"uri":"`+c2.uri+`"}`)
		var r struct {
			Contents []map[string]json.RawMessage `json:"contents"`
		}
		if json.Unmarshal(m.Member("result"), &r) != nil || len(r.Contents) != 1 {
			t.Errorf("read %s: %s", c2.uri, m)
			continue
		}
		got := r.Contents[0]
		if want := appHTML(c2.server, c2.own); !bytes.Equal(got["text"], want) {
			t.Errorf("read %s: text\n%s\nwant (byte for byte)\n%s", c2.uri, got["text"], want)
		}
		if string(got["uri"]) != `"`+c2.uri+`"` || string(got["_meta"]) != `{"ui":{"prefersBorder":true}}` {
			t.Errorf("read %s: uri %s, _meta %s", c2.uri, got["uri"], got["_meta"])
		}
	}

	code, msg, data := c.Call("resources/read", `{"uri":"ui://app/view.html"}`).Error(t)
	if code != -32602 || !strings.Contains(msg, "ui://a/app/view.html") || !strings.Contains(msg, "ui://b/app/view.html") || data["candidates"] == nil {
		t.Errorf("reading a backend's own URI two list: %d %q %v", code, msg, data)
	}

	// A completion of a template's argument reaches the template's
	// server under the template it wrote.
	m := c.Call("completion/complete", `{"ref":{"type":"ref/resource","uri":"ui://b/app/pages/{page}"},"argument":{"name":"page","value":""}}`)
	if !bytes.Contains(m.Member("result"), []byte(`"values":["ui://app/pages/{page}"]`)) {
		t.Errorf("completion: %s", m)
	}

	// A subscription names the URI as shown; so does the update.
	mark := c.Mark()
	c.Call("resources/subscribe", `{"uri":"ui://b/app/view.html"}`)
	up := c.WaitNote(mark, "notifications/resources/updated", testutil.DefaultTimeout)
	if !bytes.Contains(up.Member("params"), []byte(`"uri":"ui://b/app/view.html"`)) {
		t.Errorf("update: %s", up)
	}
}

// An app calls its server's tools by their own names: a name only one
// backend with an app has resolves to it (a backend without an app having
// it too changes nothing); one two apps' backends have is refused, naming
// both.
func TestAppsOwnNameCalls(t *testing.T) {
	gw, ctx := newGateway(t, nil, appServer("a"), testServer("plain"), appServer("b"))
	c := serveRawWith(t, ctx, gw, uiCaps)
	code, msg, data := c.Call("tools/call", `{"name":"poll","arguments":{}}`).Error(t)
	if code != -32602 || !strings.Contains(msg, "a.poll and b.poll") || !slices.Equal(toStrings(data["candidates"]), []string{"a.poll", "b.poll"}) {
		t.Errorf("an own name two apps have: %d %q %v", code, msg, data)
	}

	gw, ctx = newGateway(t, nil, testServer("plain"), appServer("a"))
	c = serveRawWith(t, ctx, gw, uiCaps)
	for _, name := range []string{"poll", "a.poll", "echo"} {
		m := c.Call("tools/call", `{"name":"`+name+`","arguments":{"x":1}}`)
		sc, _ := m.Result(t)["structuredContent"].(map[string]any)
		switch name {
		case "echo":
			// plain has an echo too, but no app: a's is the one.
			if sc["x"] == nil {
				t.Errorf("echo by its own name: %s", m)
			}
		default:
			if sc["server"] != "a" || sc["tool"] != "poll" {
				t.Errorf("%s: %s", name, m)
			}
		}
	}
	if code, _, _ := c.Call("tools/call", `{"name":"crash2","arguments":{}}`).Error(t); code != -32602 {
		t.Errorf("an unknown name: %d", code)
	}

	// Everything else is as by the front name: results byte for byte
	// (isError, unknown content, 19-digit numbers), progress under the
	// client's token.
	for _, args := range []string{`{}`, `{"isError":true}`} {
		own := c.Call("tools/call", `{"name":"odd","arguments":`+args+`}`).Member("result")
		front := c.Call("tools/call", `{"name":"a.odd","arguments":`+args+`}`).Member("result")
		if len(own) == 0 || !bytes.Equal(own, front) {
			t.Errorf("odd %s by its own name:\n%s\nby its front name:\n%s", args, own, front)
		}
	}
	mark := c.Mark()
	c.Send(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","arguments":{"steps":2,"ms":1},"_meta":{"progressToken":"tok"}}}`)
	testutil.WaitFor(t, testutil.DefaultTimeout, "progress's result", func() bool { return len(c.Since(mark, "")) > 0 })
	if got := c.Since(mark, "notifications/progress"); len(got) != 2 || !bytes.Contains(got[1].Member("params"), []byte(`"progressToken":"tok"`)) {
		t.Errorf("progress by its own name: %v", got)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

// App-only tools are listed to hosts that render apps (they keep them from
// the model), not to other clients, and never found by find_tools; they
// are callable either way.
func TestAppsAppOnlyVisibility(t *testing.T) {
	gw, ctx := newGateway(t, nil, appServer("a"))
	for _, c := range []struct {
		caps   string
		listed bool
	}{{uiCaps, true}, {`{}`, false}, {`{"extensions":{"other/ext":{}}}`, false}} {
		rc := serveRawWith(t, ctx, gw, c.caps)
		tools := rc.list(t, "tools/list", "tools", "name")
		if _, ok := tools["a.poll"]; ok != c.listed {
			t.Errorf("client %s: a.poll listed %v, want %v", c.caps, ok, c.listed)
		}
		if _, ok := tools["a.show"]; !ok {
			t.Errorf("client %s: a.show not listed", c.caps)
		}
		if m := rc.Call("tools/call", `{"name":"a.poll","arguments":{}}`); m.Member("result") == nil {
			t.Errorf("client %s: a.poll: %s", c.caps, m)
		}
	}

	gw, ctx = newGateway(t, func(c *config.Config) { c.Gateway.ToolsMode = "lazy" }, appServer("a"))
	rc := serveRawWith(t, ctx, gw, uiCaps)
	for _, q := range []string{"poll", "show"} {
		m := rc.Call("tools/call", `{"name":"gateway.find_tools","arguments":{"query":"`+q+`"}}`)
		found := bytes.Contains(m.Member("result"), []byte(`a.`+q))
		if found != (q == "show") {
			t.Errorf("find_tools %q found a.%s: %v: %s", q, q, found, m)
		}
	}
}

// The gateway declares MCP Apps to its client when a backend does: it
// serves the extension's tools and resources. Other extensions it cannot
// route are not declared.
func TestAppsExtensionDeclared(t *testing.T) {
	gw, ctx := newGateway(t, nil, appServer("a"))
	gw.opts.Backends.Wait(ctx, testutil.DefaultTimeout)
	caps := gw.initializeResult("2025-11-25", nil)
	var r struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	json.Unmarshal(caps, &r)
	if _, ok := r.Capabilities.Extensions[backends.AppsExtension]; !ok || len(r.Capabilities.Extensions) != 1 {
		t.Errorf("initialize's capabilities: %s", caps)
	}
}

// A read result's ui:// uris are shown as the route's, wherever the
// contents are; nothing else changes, byte for byte.
func TestShownContents(t *testing.T) {
	r := resourceRoute{server: "s", own: "ui://a", ui: true}
	res := ` { "contents" : [ {"text":"\\\" \"uri\":\"ui://x\"", "uri" : "ui://a", "_meta":{"uri":"ui://m"}},` +
		`{"uri":"https://b"}, {"blob":"AA==","uri":"ui://c/d"} ], "_meta":{"uri":"ui://top"} }`
	want := ` { "contents" : [ {"text":"\\\" \"uri\":\"ui://x\"", "uri" : "ui://s/a", "_meta":{"uri":"ui://m"}},` +
		`{"uri":"https://b"}, {"blob":"AA==","uri":"ui://s/c/d"} ], "_meta":{"uri":"ui://top"} }`
	if got := r.shownContents(json.RawMessage(res)); string(got) != want {
		t.Errorf("shownContents:\n%s\nwant\n%s", got, want)
	}
	for _, same := range []string{`{"contents":[{"uri":"file:///x"}]}`, `{"contents":{}}`, `{}`} {
		if got := r.shownContents(json.RawMessage(same)); string(got) != same {
			t.Errorf("shownContents(%s) = %s", same, got)
		}
	}
}

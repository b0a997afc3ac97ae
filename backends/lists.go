package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// maxPages bounds a paged list, in case a backend hands out cursors forever.
const maxPages = 1000

// CacheHint is what a backend's list result said of caching it (the
// ttlMs and cacheScope of 2026-07-28): Set when it said anything.
type CacheHint struct {
	Set     bool
	TTLMs   int
	Private bool // cacheScope "private"
}

// cacheHint reads a list result's cache hint.
func cacheHint(body map[string]json.RawMessage) CacheHint {
	var h CacheHint
	if raw, ok := body["ttlMs"]; ok && json.Unmarshal(raw, &h.TTLMs) == nil && h.TTLMs >= 0 {
		h.Set = true
	}
	var scope string
	if raw, ok := body["cacheScope"]; ok && json.Unmarshal(raw, &scope) == nil {
		h.Set, h.Private = true, scope == "private"
	}
	return h
}

// listAll fetches every page of a list method (tools/list, ...) and returns
// the items of field, each exactly as the backend wrote it, and the first
// page's _meta, if any, and cache hint.
func listAll(ctx context.Context, c *conn, method, field string, o rpcconn.CallOptions) (items []json.RawMessage, meta json.RawMessage, hint CacheHint, err error) {
	var (
		cursor string
		seen   = map[string]bool{}
	)
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, nil, hint, fmt.Errorf("%s: more than %d pages", method, maxPages)
		}
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, err := c.Call(ctx, method, params, o)
		if err != nil {
			return nil, nil, hint, err
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(res, &body); err != nil {
			return nil, nil, hint, fmt.Errorf("%s: bad result: %w", method, err)
		}
		var pageItems []json.RawMessage
		if raw, ok := body[field]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &pageItems); err != nil {
				return nil, nil, hint, fmt.Errorf("%s: bad %q: %w", method, field, err)
			}
		}
		items = append(items, pageItems...)
		cursor = ""
		if raw, ok := body["nextCursor"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &cursor); err != nil {
				return nil, nil, hint, fmt.Errorf("%s: bad nextCursor: %w", method, err)
			}
		}
		if page == 0 {
			if m, ok := body["_meta"]; ok && string(m) != "null" {
				meta = m
			}
			hint = cacheHint(body)
		}
		if cursor == "" {
			return items, meta, hint, nil
		}
		if seen[cursor] {
			return nil, nil, hint, fmt.Errorf("%s: cursor %q repeated", method, cursor)
		}
		seen[cursor] = true
	}
}

// stringField returns the string member key of a JSON object, or "".
func stringField(raw json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// toolAllowed applies a server's include/exclude globs (path.Match) to a
// tool's own name: an empty include list allows everything, and exclude
// wins. A malformed pattern matches nothing.
func toolAllowed(f config.ToolFilter, name string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			if ok, err := path.Match(p, name); err == nil && ok {
				return true
			}
		}
		return false
	}
	if len(f.Include) > 0 && !match(f.Include) {
		return false
	}
	return !match(f.Exclude)
}

// lists are a backend's tools, prompts and resources, and the _meta and
// cache hint of each list's result, by list method.
type lists struct {
	tools     []Tool
	listed    map[string]bool                 // the names of tools: what a call may name
	headers   map[string][]wire.HeaderBinding // the tools' Mcp-Param bindings, of those that have any
	prompts   []Prompt
	resources []Resource // resources, then templates
	meta      map[string]json.RawMessage
	hints     map[string]CacheHint
}

// setMeta records a list's _meta.
func (l *lists) setMeta(method string, meta json.RawMessage) {
	if meta == nil {
		return
	}
	if l.meta == nil {
		l.meta = make(map[string]json.RawMessage)
	}
	l.meta[method] = meta
}

// listKind is a bit set of lists to (re)fetch.
type listKind uint8

const (
	listTools listKind = 1 << iota
	listPrompts
	listResources
	listAllKinds = listTools | listPrompts | listResources
)

// fetch gets the lists of kinds from c; the capabilities say which the
// backend has. A tools/list error fails; a prompts or resources error is
// logged and leaves that list empty (they are optional extras).
func (b *backend) fetch(ctx context.Context, c *conn, caps serverCaps, kinds listKind, o rpcconn.CallOptions) (lists, error) {
	var (
		tools, prompts, resources, templates []json.RawMessage
		meta                                 = map[string]json.RawMessage{}
		hints                                = map[string]CacheHint{}
	)
	if kinds&listTools != 0 {
		raws, m, h, err := listAll(ctx, c, "tools/list", "tools", o)
		meta["tools/list"], hints["tools/list"] = m, h
		var se *ServerError
		if err != nil && (caps.tools || ctx.Err() != nil || errors.As(err, &se)) {
			return lists{}, fmt.Errorf("tools/list: %w", err)
		}
		tools = raws
	}
	if kinds&listPrompts != 0 && caps.prompts {
		raws, m, h, err := listAll(ctx, c, "prompts/list", "prompts", o)
		meta["prompts/list"], hints["prompts/list"] = m, h
		if err != nil {
			if ctx.Err() != nil {
				return lists{}, err
			}
			b.log.Warn("prompts/list failed", "err", err)
		}
		prompts = raws
	}
	if kinds&listResources != 0 && caps.resources {
		for _, lk := range []struct {
			method, field string
			items         *[]json.RawMessage
		}{
			{"resources/list", "resources", &resources},
			{"resources/templates/list", "resourceTemplates", &templates},
		} {
			raws, m, h, err := listAll(ctx, c, lk.method, lk.field, o)
			meta[lk.method], hints[lk.method] = m, h
			if err != nil {
				if ctx.Err() != nil {
					return lists{}, err
				}
				b.log.Warn("list failed", "method", lk.method, "err", err)
			}
			*lk.items = raws
		}
	}
	// A definition that quotes the server's secret would hand it to every
	// client and model, the snapshot and the pin file (secrets.go).
	for _, raws := range [][]json.RawMessage{tools, prompts, resources, templates} {
		for i := range raws {
			raws[i] = b.values.maskJSON(raws[i])
		}
	}
	l := decodeLists(b.cfg, tools, prompts, resources, templates, b.log)
	b.annotate(&l)
	for method, m := range meta {
		l.setMeta(method, m)
	}
	l.hints = hints
	return l, nil
}

// The members of a definition that someone reads, for wire.Ambiguous: the
// gateway (the digest and the scanner, confirmation, lazy mode's index,
// apps), clients and models. One given in another case, or two members
// of one object anywhere in a definition that differ only in case or not
// at all, would be read one way by the digest and the scanner (exact
// names) and another by Go's encoding/json (without case, the last one):
// such a definition is left out, whatever the trust policy.
var (
	toolMembers = wire.Known{
		Names: []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta", "execution"},
		Members: map[string]*wire.Known{
			"annotations": {Names: []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}},
			"execution":   {Names: []string{"taskSupport"}},
			"_meta":       {Names: []string{"ui", "ui/resourceUri"}, Members: map[string]*wire.Known{"ui": {Names: []string{"resourceUri", "visibility"}}}},
		},
	}
	promptMembers = wire.Known{
		Names:   []string{"name", "title", "description", "arguments", "icons", "_meta"},
		Members: map[string]*wire.Known{"arguments": {Elements: &wire.Known{Names: []string{"name", "title", "description", "required"}}}},
	}
	resourceMembers = wire.Known{
		Names: []string{"uri", "uriTemplate", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta"},
	}
)

// unambiguous reports whether raw, a definition of kind named name, has no
// ambiguous member (wire.Ambiguous), and logs it, given log, when it has one.
func unambiguous(raw json.RawMessage, known *wire.Known, kind, name string, log *slog.Logger) bool {
	a := wire.Ambiguous(raw, known)
	if a != nil && log != nil {
		msg := "ignored a " + kind + " whose member names are ambiguous: clients would not all read it as the gateway does"
		if kind == "resource" {
			log.Warn(msg, "err", a.Error()) // a URI may carry a credential
		} else {
			log.Warn(msg, kind, name, "err", a.Error())
		}
	}
	return a == nil
}

// decodeLists makes a backend's lists of the items it listed (or a
// snapshot kept): tools without a name or with invalid x-mcp-header
// marks (wire.CheckHeaderMarks), prompts without a name, resources
// without a URI, and any definition with ambiguous members (toolMembers)
// are left out (and logged, given log), and the server's tool filter
// applies.
func decodeLists(s config.Server, tools, prompts, resources, templates []json.RawMessage, log *slog.Logger) lists {
	var l lists
	for _, raw := range tools {
		name := stringField(raw, "name")
		if name == "" {
			if log != nil {
				log.Warn("ignored a tool without a name")
			}
			continue
		}
		if !unambiguous(raw, &toolMembers, "tool", name, log) {
			continue
		}
		if err := wire.CheckHeaderMarks(wire.Member(raw, "inputSchema")); err != nil {
			// A client of 2026-07-28 must not call it: its headers could
			// not be written (or checked) as the schema says.
			if log != nil {
				log.Warn("ignored a tool whose x-mcp-header marks are invalid", "tool", name, "err", err)
			}
			continue
		}
		if toolAllowed(s.Tools, name) {
			l.tools = append(l.tools, Tool{Server: s.Name, Name: name, Raw: raw})
			if l.listed == nil {
				l.listed = make(map[string]bool)
			}
			l.listed[name] = true
			if hb := wire.HeaderBindings(wire.Member(raw, "inputSchema")); len(hb) > 0 {
				if l.headers == nil {
					l.headers = make(map[string][]wire.HeaderBinding)
				}
				l.headers[name] = hb
			}
		}
	}
	for _, raw := range prompts {
		if name := stringField(raw, "name"); name != "" && unambiguous(raw, &promptMembers, "prompt", name, log) {
			l.prompts = append(l.prompts, Prompt{Server: s.Name, Name: name, Raw: raw})
		}
	}
	for _, raw := range resources {
		if uri := stringField(raw, "uri"); uri != "" && unambiguous(raw, &resourceMembers, "resource", uri, log) {
			l.resources = append(l.resources, Resource{Server: s.Name, URI: uri, Raw: raw})
		}
	}
	for _, raw := range templates {
		if uri := stringField(raw, "uriTemplate"); uri != "" && unambiguous(raw, &resourceMembers, "resource", uri, log) {
			l.resources = append(l.resources, Resource{Server: s.Name, URI: uri, Template: true, Raw: raw})
		}
	}
	return l
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// The four lists are answered by the session, raw: each definition as its
// backend wrote it — every member, unknown ones included, in the backend's
// order — under the front name (tools and prompts), grouped by backend in
// configuration order, after the gateway's own tools; the result's _meta
// merges the backends' (listMeta). go-sdk's tables,
// which list by key and drop what its types lack, only notify changes.
//
// A list is one page: the gateway fetched every page of each backend's
// list already, so it hands out no cursor, and a request with one is
// refused (-32602) rather than answered with the first page again.

// list answers one of the four list methods; for a request of the
// per-request era (era) with its cache hints (cacheHints).
func (f *front) list(ctx context.Context, method string, params json.RawMessage, era wire.Era) (json.RawMessage, error) {
	if err := checkCursor(params); err != nil {
		return nil, err
	}
	if method == "tools/list" && f.g.lazy() {
		f.rebuild(ctx, ifNone) // it names no backend tool: nothing to wait for
	} else {
		f.rebuild(ctx, settled) // the first list holds what is known of every backend
	}
	list, _ := listOf(method)
	f.mu.Lock()
	f.seen[list] = f.versions[list] // read with the list: a change after it still notifies
	f.listed[list] = true
	f.notified[list] = false
	// The tables after the version: a change stored after this read is
	// counted after it too, and still notified (front.build).
	t := f.tables()
	f.mu.Unlock()
	var (
		items []json.RawMessage
		field string // the member the result holds
		lazy  bool   // tools/list holds the meta tools (lazy mode's list)
	)
	switch method {
	case "tools/list":
		items, field, lazy = t.toolDefs, "tools", t.lazyListed
	case "prompts/list":
		items, field = t.promptDefs, "prompts"
	case "resources/list":
		items, field = t.resourceDefs, "resources"
	case "resources/templates/list":
		items, field = t.templateDefs, "resourceTemplates"
	}
	n := len(field) + 8
	for _, it := range items {
		n += len(it) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, `{"`...)
	out = append(out, field...)
	out = append(out, `":[`...)
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	out = append(out, ']')
	if meta := f.listMeta(method, lazy); meta != nil {
		out = append(append(out, `,"_meta":`...), meta...)
	}
	if era == wire.PerRequestEra {
		ttl, scope := f.cacheHints(method, lazy)
		out = fmt.Appendf(out, `,"ttlMs":%d,"cacheScope":%q`, ttl, scope)
	}
	return append(out, '}'), nil
}

// cacheHints are a list's ttlMs and cacheScope for a client of the
// per-request era, derived from the backends': the shortest time any
// backend in the list gives (one that gives none counts as 0, stale at
// once), and "private" when any backend says so, or when the list depends
// on who asks — names that follow the client (strict_names: auto), a
// tools/list that follows the client's cap (tools_mode: auto). lazy: the
// list is lazy mode's tools/list, which holds no backend's tools.
func (f *front) cacheHints(method string, lazy bool) (ttl int, scope string) {
	scope = "public"
	if gc := f.g.opts.Config.Gateway; gc.StrictNames == "auto" || method == "tools/list" && gc.ToolsMode == "auto" {
		scope = "private"
	}
	b := f.g.opts.Backends
	if lazy {
		return 0, scope
	}
	first := true
	for _, h := range b.ListHintsFor(method, f.upstream()) {
		t := 0
		if h.Set {
			t = h.TTLMs
		}
		if first || t < ttl {
			ttl, first = t, false
		}
		if h.Private {
			scope = "private"
		}
	}
	return ttl, scope
}

// listMeta merges the _meta of the backends' results of a list method:
// each member as the first backend (in configuration order) that has it
// wrote it. It is nil when no backend's result had one, and for lazy
// mode's tools/list (lazy), which lists no backend tools.
func (f *front) listMeta(method string, lazy bool) json.RawMessage {
	b := f.g.opts.Backends
	if lazy {
		return nil
	}
	var merged json.RawMessage
	for _, meta := range b.ListMetaFor(method, f.upstream()) {
		_ = wire.EachMember(meta, func(name string, v json.RawMessage) {
			if merged == nil {
				merged = json.RawMessage(`{}`)
			}
			if wire.Member(merged, name) == nil {
				merged, _ = wire.SetMember(merged, name, v)
			}
		})
	}
	return merged
}

// checkParams checks that params, if any, are an object: every method's
// are. The session's -32602 errors say what is wrong in JSON's terms, as
// the gateway's other errors do.
func checkParams(params json.RawMessage) error {
	if p := bytes.TrimSpace(params); len(p) > 0 && string(p) != "null" && p[0] != '{' {
		return errInvalidParams("params must be an object")
	}
	return nil
}

// checkCursor checks a list request's params. The gateway hands out no
// cursor, so a request that carries one is refused rather than answered
// with the first page again.
func checkCursor(params json.RawMessage) error {
	if err := checkParams(params); err != nil {
		return err
	}
	c := bytes.TrimSpace(wire.Member(params, "cursor"))
	switch {
	case len(c) == 0 || string(c) == "null":
		return nil
	case c[0] != '"':
		return errInvalidParams("cursor must be a string")
	}
	return errInvalidParams("invalid cursor: the gateway lists everything in one page")
}

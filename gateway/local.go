package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// ToolInfo describes one tool a client can call, for `mcp-gateway tools`.
type ToolInfo struct {
	Name        string    `json:"name"`        // as clients without strict names see it
	StrictName  string    `json:"strict_name"` // as strict clients (Claude, Codex, ...) see it
	Server      string    `json:"server"`      // backend name; "" for the gateway's own tools
	Own         string    `json:"own_name"`    // the name its owner knows it by
	Description string    `json:"description,omitempty"`
	Tool        *mcp.Tool `json:"tool"`
	meta        bool      // one of lazy mode's meta tools
}

// Tools returns every tool a client without a caller (the command line,
// stdio, the dashboard) can call now, with both naming forms, sorted by
// name; the caller waits for the backends it wants listed
// (backends.Manager.Wait). A server reached per caller shows it none.
func (g *Gateway) Tools() []ToolInfo { return g.toolsOf(nil) }

// toolsOf is Tools as caller up is shown them: a server reached per caller
// shows its own session's (toolRoutesFor).
func (g *Gateway) toolsOf(up *backends.Caller) []ToolInfo {
	plain, strict := g.toolRoutesFor(g.namer(false), up).routes, g.toolRoutesFor(g.namer(true), up).routes
	strictOf := make(map[[2]string]string, len(strict))
	for name, r := range strict {
		strictOf[[2]string{r.server, r.own}] = name
	}
	out := make([]ToolInfo, 0, len(plain))
	for _, name := range sortedKeys(plain) {
		r := plain[name]
		if r.kind == metaTool && !g.lazy() && !g.everyClientScripts(r) {
			continue // auto's, for the clients that get them only
		}
		out = append(out, ToolInfo{
			Name:        name,
			StrictName:  strictOf[[2]string{r.server, r.own}],
			Server:      r.server,
			Own:         r.own,
			Description: r.tool.Description,
			Tool:        r.tool,
			meta:        r.kind == metaTool,
		})
	}
	slices.SortStableFunc(out, func(a, b ToolInfo) int {
		if (a.Server == "") != (b.Server == "") {
			if a.Server == "" {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// ToolsFor is Tools as the caller of ctx may see them: what the policy
// lets its principal see (WithPrincipal), within the profile it is served
// under (withProfile, else gateway.profile). Lazy mode's meta tools are
// there for every caller, as in tools/list: they reach only what it may.
func (g *Gateway) ToolsFor(ctx context.Context) []ToolInfo {
	access := g.decision(ctx)
	all := g.toolsOf(upstreamCaller(PrincipalOf(ctx)))
	if access == nil {
		return all
	}
	out := all[:0]
	for _, t := range all {
		if t.meta || access.Allows(policy.Tool, toolPolicyServer(t.Server), t.Own) {
			out = append(out, t)
		}
	}
	return out
}

// SnapshotServer returns the one server whose snapshot lists a tool by
// name, in either naming form: the server a one-shot call of name needs,
// before any has started (mcp-gateway call starts only that one). ok is
// false when no snapshot, or more than one, names it.
func (g *Gateway) SnapshotServer(name string) (server string, ok bool) {
	b := g.opts.Backends
	namers := g.namers()
	for s, prefix := range g.prefixes() {
		for _, own := range b.SnapshotTools(s) {
			if !slices.ContainsFunc(namers, func(n namer) bool { return n.name(prefix, own) == name }) {
				continue
			}
			if ok && server != s {
				return "", false
			}
			server, ok = s, true
		}
	}
	return server, ok
}

// Call calls one tool by the name a client would use (either naming form)
// and returns the result as the client would receive it, or the JSON-RPC
// error it would get.
func (g *Gateway) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	f := g.newFront(frontOptions{unaskable: true, client: clientOf(ctx)})
	defer g.dropFront(f)
	f.setCaller(ctx)
	f.rebuild(ctx, settled)
	var meant []string // what an unknown name may have meant, in the first naming (tb.echo)
	if _, ok := f.lookupTool(name); !ok {
		// Not a plain name of a listed tool, nor of a backend that is not
		// running (whose error the caller should see): try the other
		// namings (tb__echo), and answer as strict names do if none has
		// it.
		if _, orphan := f.orphan(name); !orphan {
			meant = f.suggestTools(name)
			for _, n := range append(g.namers()[2:], g.namer(true)) {
				f.rename(n)
				f.rebuild(ctx, always)
				if _, ok := f.lookupTool(name); ok {
					break
				}
			}
		}
	}
	var span trace.Span
	if g.opts.Tracer != nil {
		ctx, span = g.opts.Tracer.Start(ctx, "tools/call "+name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", name),
				attribute.Int("mcp_gateway.request.size", len(args))))
	}
	raw, e := f.awaitCall(ctx, toolCall{name: name, args: args})
	if nf := (&notFoundError{kindTool, name}).Error(); e != nil && len(meant) > 0 && strings.HasPrefix(e.Message, nf) {
		// Not found in any naming: the names meant are those of the
		// naming the caller was shown (withMeant).
		e = rpcError(withMeant(&notFoundError{kindTool, name}, name, meant), kindTool, name, g.opts.Config.Server.Debug)
	}
	if span != nil {
		endRequestSpan(span, raw, e)
	}
	return raw, e
}

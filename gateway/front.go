package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// front is the MCP server of one client connection: its tool, prompt and
// resource tables mirror the answer tools and the backends under this
// client's names, and its receiving middleware routes every call.
type front struct {
	g      *Gateway
	log    *slog.Logger
	server *mcp.Server
	stream clientStream // the client's connection, if served; guarded by g.mu
	sess   *session     // its session, if served; guarded by g.mu

	// syncMu serialises sync, so that tables and routes change together.
	syncMu sync.Mutex

	mu      sync.Mutex
	session *mcp.ServerSession
	// identified is set once the client sent initialize.
	identified bool
	client     string // clientInfo.name
	identity   string // whom the HTTP front authenticated (WithIdentity)
	strict     bool
	settled    bool                   // the tables were built once the backends had settled
	synced     bool                   // the tables were built once: keep them current
	tools      map[string]toolRoute   // front name → route
	known      map[string]toolRoute   // every backend tool ever listed, for orphans
	findIndex  *toolIndex             // what gateway.find_tools searches (lazy mode)
	prompts    map[string]promptRoute // front name → route
	res        map[resourceKey]string // resource or template → the server that serves it
	// The definitions registered with go-sdk, as listed, to tell what
	// changed: front name (resource key) → definition.
	toolFP   map[string]json.RawMessage
	promptFP map[string]json.RawMessage
	subs     map[string]bool // resource URIs the client subscribed to (subscribe.go)
	tasks    taskOwners      // the tasks this session created (tasks.go)
	// stateless: a stateless HTTP request, which has no session of its
	// own, reaches every task the gateway recorded (tasks.go), and is
	// never told of a list change, so go-sdk's tables, which exist only to
	// notify changes, are not filled (sync.go).
	stateless bool
	resFP     map[resourceKey]json.RawMessage
	// The lists as the session answers them (lists.go): each definition
	// as its backend wrote it (under the front name), in listing order.
	toolDefs, promptDefs, resourceDefs, templateDefs []json.RawMessage
	templates                                        []templateRoute // listing order (resources.go)
	// versions counts changes per list (tools, prompts, resources); seen
	// is the version the client last listed, and listed whether it ever
	// did. A list_changed notification is sent only for a list the client
	// has seen and that changed since.
	versions, seen [3]uint64
	listed         [3]bool
}

// Lists whose changes are notified.
const (
	toolsList = iota
	promptsList
	resourcesList
)

// listOf maps a list method or list_changed notification to its list.
func listOf(method string) (int, bool) {
	switch method {
	case "tools/list", "notifications/tools/list_changed":
		return toolsList, true
	case "prompts/list", "notifications/prompts/list_changed":
		return promptsList, true
	case "resources/list", "resources/templates/list", "notifications/resources/list_changed":
		return resourcesList, true
	}
	return 0, false
}

// changed records a change to a list, after go-sdk's table changed: a
// client that lists in between sees the new table under the old version and
// is notified once more, rather than the old table under the new version and
// never.
func (f *front) changed(list int) {
	f.mu.Lock()
	f.versions[list]++
	f.mu.Unlock()
}

// toolKind says who serves a tool.
type toolKind int

const (
	answerTool toolKind = iota
	backendTool
	metaTool // lazy mode's gateway.* tools
)

type toolRoute struct {
	kind   toolKind
	server string // backend name (backendTool)
	own    string // the name its owner knows it by
	tool   *mcp.Tool
	def    json.RawMessage // the definition as listed (toolDef)
}

type promptRoute struct {
	server, own string
}

// route is the receiving middleware: the one place where the front decides
// what a request goes to.
func (f *front) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			// The answer carries the backends' capabilities and
			// instructions (initialize.go), as live or as their snapshots
			// say; only a backend never seen before is waited for, briefly.
			if !f.g.lazy() {
				f.g.waitFirstStarts(ctx)
			}
			res, err := next(ctx, method, req)
			if err == nil {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				p, _ := req.GetParams().(*mcp.InitializeParams)
				f.identify(ss, p)
			}
			return res, err
		case "logging/setLevel":
			res, err := next(ctx, method, req)
			if err == nil {
				f.setBackendLevel(ctx, req)
			}
			return res, err
		case "resources/subscribe", "resources/unsubscribe":
			// A client may get or read without listing first (a stateless
			// HTTP request always does): the tables must exist.
			f.settle(ctx)
		}
		return next(ctx, method, req)
	}
}

// notify is the sending middleware. go-sdk sends list_changed for every
// change to a table, including the first build that the client's own first
// list triggers; the client needs one only when the list it last saw is out
// of date.
func (f *front) notify(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if list, ok := listOf(method); ok && strings.HasPrefix(method, "notifications/") {
			f.mu.Lock()
			stale := f.listed[list] && f.seen[list] != f.versions[list]
			f.mu.Unlock()
			if !stale {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// identify records who the client is and picks its naming mode.
func (f *front) identify(ss *mcp.ServerSession, p *mcp.InitializeParams) {
	name := ""
	if p != nil && p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	strict := strictMode(f.g.opts.Config.Gateway.StrictNames, name)
	f.mu.Lock()
	f.session = ss
	f.identified = true
	f.client = name
	f.strict = strict
	f.mu.Unlock()
	f.log.Info("client connected", "client", name, "strict_names", strict)
}

// notReady says why a tools/call may not be served yet, or nil: the
// client must have sent initialize. A request of a revision without
// initialize (2026-07-28, which names its version in _meta) is refused
// with the versions the gateway serves, as go-sdk refuses its other
// methods (servedVersions).
func (f *front) notReady(meta map[string]json.RawMessage) *jsonrpc.Error {
	f.mu.Lock()
	ok := f.identified
	f.mu.Unlock()
	if ok {
		return nil
	}
	var version string
	if json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &version) == nil && version != "" {
		return errUnsupportedVersion(version)
	}
	return errNotInitialized
}

func (f *front) currentSession() *mcp.ServerSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.session
}

// refresh re-syncs the tables after a backend changed. Before the client's
// first list or call there is nothing to refresh: that builds the tables.
func (f *front) refresh() {
	f.mu.Lock()
	synced := f.synced
	f.mu.Unlock()
	if synced {
		f.sync()
	}
}

// build builds the tables if they never were, without waiting for any
// backend.
func (f *front) build() {
	f.mu.Lock()
	synced := f.synced
	f.mu.Unlock()
	if !synced {
		f.sync()
	}
}

// settle builds the tables once, after the brief wait for backends never
// seen before (waitFirstStarts), so that the first list a client sees
// holds what is known of every backend. Every caller that finds the first
// build unfinished waits and syncs itself (sync is serialised and
// idempotent): returning as soon as another caller had begun would answer
// from tables still being built.
func (f *front) settle(ctx context.Context) {
	f.mu.Lock()
	settled := f.settled
	f.mu.Unlock()
	if settled {
		return
	}
	f.g.waitFirstStarts(ctx)
	if ctx.Err() != nil {
		return // the wait was cut short: the next list or call waits again
	}
	f.sync()
	f.mu.Lock()
	f.settled = true
	f.mu.Unlock()
}

package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// front is what one client connection sees of the gateway: its tool,
// prompt and resource tables mirror the answer tools and the backends
// under this client's names, and the session (session.go) serves every
// request from them. The front and its session are the one source of
// truth of the connection: there is no second copy of the lists anywhere
// to keep in step.
type front struct {
	g      *Gateway
	log    *slog.Logger
	stream clientStream // the client's connection, if served; guarded by g.mu
	sess   *session     // its session, if served; guarded by g.mu
	pipe   bool         // the client is on a pipe (stdio), for traces
	// unaskable: the caller cannot be asked anything (Call); a backend's
	// request during its calls is refused (client_requests.go).
	unaskable bool

	// syncMu serialises sync, so that tables and routes change together.
	syncMu sync.Mutex

	mu sync.Mutex
	// identified is set by the client's initialize, or by the first
	// request of the per-request era, which says who the client is in
	// _meta.
	identified bool
	// initialized: the handshake is done (initialize answered); a client
	// of the per-request era needs none.
	initialized bool
	version     string // the negotiated version (handshake era)
	client      string // clientInfo.name
	identity    string // the principal's key for the audit log ("" when anonymous), set with who
	// who is the client's principal (the HTTP front's authentication),
	// nil on stdio and the command line; access is what the policy lets
	// it see, nil for everything (access.go).
	who    *authn.Principal
	access *policy.Decision
	// deniedPrompts and deniedRes are what the policy hides of the
	// prompts and resources, to report a request for one (hidden).
	deniedPrompts map[string]promptRoute
	deniedRes     map[resourceKey]string
	caps          json.RawMessage // the client's capabilities, as it wrote them
	declared      json.RawMessage // what backends are told of them (backendCaps)
	naming        namer           // how the client's tools and prompts are named (namerFor)
	// maxTools is the most tools the client's tools/list holds before it
	// holds the meta tools instead (tools_mode: auto, clients.go); 0: no
	// cap. The meta tools are there for such a client, listed or not.
	maxTools int
	// lazyListed: the tools/list the tables hold is lazy mode's (the
	// meta tools), for tools_mode: lazy or a client over its maxTools.
	lazyListed bool
	// profile is the profile the front serves (gateway.profiles), ""
	// for none; access is bounded by it (access.go).
	profile   string
	settled   bool                          // the first wait for backends is over (settle)
	synced    bool                          // the tables were built once: keep them current
	tools     map[string]toolRoute          // front name → route
	ownNames  map[string][]string           // own name of an app's backend's tool → front names (apps.go)
	known     map[string]toolRoute          // every backend tool ever listed, for orphans
	findIndex *toolIndex                    // what gateway.find_tools searches (lazy mode)
	prompts   map[string]promptRoute        // front name → route
	res       map[resourceKey]resourceRoute // resource or template → where it goes (resources.go)
	ownUI     map[string][]string           // a backend's own ui:// URI → the URIs it is shown as
	subs      map[string]bool               // resource URIs the client subscribed to (subscribe.go)
	tasks     taskOwners                    // the tasks this session created (tasks.go)
	// sessionless: an HTTP POST served on its own (HTTPOptions.Sessionless,
	// or a POST of the per-request era), which has no session to come back
	// to: it reaches every task the gateway recorded (tasks.go) and is
	// never notified of anything.
	sessionless bool
	// The lists as the session answers them (lists.go): each definition
	// as its backend wrote it (under the front name), in listing order.
	toolDefs, promptDefs, resourceDefs, templateDefs []json.RawMessage
	templates                                        []templateRoute // listing order (resources.go)
	// versions counts changes per list (tools, prompts, resources); seen
	// is the version the client last listed, and listed whether it ever
	// did; notified is set when list_changed went out, until the client
	// lists again (one notification per change it has not seen yet).
	versions, seen   [3]uint64
	listed, notified [3]bool
	// gens are the backends' list generations the tables were last built
	// at (backends.Manager.ListGenerations).
	gens    [3]uint64
	listens map[string]*listen // subscriptions/listen in flight, by request id (listen.go)
}

// Lists whose changes are notified.
const (
	toolsList = iota
	promptsList
	resourcesList
)

// listOf maps a list method to its list.
func listOf(method string) (int, bool) {
	switch method {
	case "tools/list":
		return toolsList, true
	case "prompts/list":
		return promptsList, true
	case "resources/list", "resources/templates/list":
		return resourcesList, true
	}
	return 0, false
}

// listChangedMethod is the notification of a change to list.
var listChangedMethod = [3]string{
	toolsList:     "notifications/tools/list_changed",
	promptsList:   "notifications/prompts/list_changed",
	resourcesList: "notifications/resources/list_changed",
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
	server string          // backend name (backendTool)
	own    string          // the name its owner knows it by
	tool   *mcp.Tool       // decoded, for find_tools, mcp-gateway tools and REST
	def    json.RawMessage // the definition as listed (toolDef)
	app    appMeta         // what MCP Apps' _meta.ui says of it (apps.go)
	// snapshot: the definition is its server's snapshot's, shown while
	// the server starts; a call waits for the live list (liveRoute).
	snapshot bool
}

type promptRoute struct {
	server, own string
}

// changed records a change to a list, after the tables changed (real),
// or a backend's word that its list changed although the tables did not,
// and tells the client: of a real change by list_changed (handshake era)
// once it has listed that list and not since been told, and of either on
// every subscriptions/listen that asked for it (per-request era), as the
// server would directly. A sessionless HTTP request is told nothing but on
// a listen.
func (f *front) changed(list int, real bool) {
	f.mu.Lock()
	if real {
		f.versions[list]++
	}
	tell := real && !f.sessionless && f.initialized && f.listed[list] && !f.notified[list] && f.seen[list] != f.versions[list]
	if tell {
		f.notified[list] = true
	}
	listens := f.listensFor(list)
	s := f.sess
	f.mu.Unlock()
	if s == nil {
		return
	}
	if tell {
		s.notify(listChangedMethod[list], nil)
	}
	for _, l := range listens {
		l.send(listChangedMethod[list], nil)
	}
}

// identify records who the client is — its initialize, or the _meta of a
// request of the per-request era — and picks its naming and how many tools
// it takes (clients.go). Only the first counts (it reports whether this
// was the first): the names a client was shown stay its names.
func (f *front) identify(client string, caps json.RawMessage, version string) bool {
	naming, maxTools := f.g.namerFor(client), f.g.maxToolsFor(client)
	declared := backends.Declared(caps)
	f.mu.Lock()
	if f.identified {
		f.mu.Unlock()
		return false
	}
	f.identified = true
	f.client, f.caps, f.version, f.naming, f.maxTools = client, caps, version, naming, maxTools
	f.declared = declared
	f.mu.Unlock()
	if !f.sessionless {
		f.log.Info("client connected", "client", client, "protocol", version, "strict_names", naming.strict,
			"max_name", naming.limit(), "max_tools", maxTools, "profile", f.profile)
	}
	return true
}

// backendCaps are the client capabilities a backend of the per-request era
// is told in the _meta of a request made for this front's client
// (backends.CallOptions.ClientCaps), whatever the transport: declared —
// what a request of 2026-07-28 declared itself — if not nil; else none
// ({}) for a caller that cannot be asked (REST, the command line) or that
// declared none; else what the client declared at initialize
// (backends.Declared). Never the ones the backends' shared session is
// told: a backend told of a capability its caller lacks asks what nobody
// will answer (or runs what it should refuse), and one not told of a
// capability the caller has leaves out what it offers with it.
func (f *front) backendCaps(declared json.RawMessage) json.RawMessage {
	switch {
	case declared != nil:
		return declared
	case f.unaskable:
		return json.RawMessage(`{}`)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.declared == nil {
		return json.RawMessage(`{}`) // not identified: it declared nothing
	}
	return f.declared
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

// isSessionless reports whether the front serves a request on its own.
func (f *front) isSessionless() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessionless
}

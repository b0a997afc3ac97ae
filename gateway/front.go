package gateway

import (
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// front is what one client connection sees of the gateway: its tool,
// prompt and resource tables mirror the answer tools and the backends
// under this client's names, and the session (session.go) serves every
// request from them. The front and its session are the one source of
// truth of the connection: there is no second copy of the lists anywhere
// to keep in step.
//
// Its state is kept by lifetime, each kind with its own way to read it:
//
//   - fixed at newFront (frontOptions), before the front is shared: plain
//     fields, read without a lock (registering the front in g.fronts, under
//     g.mu, is the happens-before edge to every other goroutine);
//   - what the client declares (declared): set once, by its initialize or
//     the first request of the per-request era (identify), as an immutable
//     value published with an atomic pointer; read without a lock;
//   - who the caller is and what the policy lets it see (grant): an
//     immutable value swapped atomically, when a session's caller comes
//     back with a token that decides otherwise (serves);
//   - the tables (tables): an immutable snapshot that rebuild makes from
//     the backends' lists and swaps atomically; a request loads it once
//     and reads it without a lock;
//   - the notification state (list versions, subscriptions, listens, and
//     whether the tables were built) under mu, which guards nothing else.
type front struct {
	g   *Gateway
	log *slog.Logger

	// Fixed at newFront.
	pipe bool // the client is on a pipe (stdio), for traces
	// unaskable: the caller cannot be asked anything (Call); a backend's
	// request during its calls is refused (client_requests.go).
	unaskable bool
	// sessionless: an HTTP POST served on its own (HTTPOptions.Sessionless,
	// or a POST of the per-request era), which has no session to come back
	// to: it reaches every task the gateway recorded (tasks.go) and is
	// never notified of anything.
	sessionless bool
	// sealed: the session's id is sealed (sessionseal.go), so the client
	// may list on any replica: a change to a list is told whether or not
	// it listed here. issuer, when not "", is the replica that issued the
	// session and this front serves a copy of (adopt): only that replica
	// can ask the client anything, or stream it notifications.
	sealed bool
	issuer string

	stream clientStream // the client's connection, if served; guarded by g.mu
	sess   *session     // its session, if served; guarded by g.mu

	// initialized: the handshake is done (initialize answered); a client
	// of the per-request era needs none (sessionless fronts start so).
	initialized atomic.Bool
	decl        atomic.Pointer[declared] // never nil: newFront stores the defaults
	gr          atomic.Pointer[grant]    // nil until setCaller: no principal, sees everything
	tab         atomic.Pointer[tables]   // nil until the first rebuild: empty tables

	// rebuildMu serialises build (rebuild's step), the one writer of tab,
	// so that the tables and the versions of the lists change together.
	rebuildMu sync.Mutex

	// mu guards the notification state below, and only it.
	mu      sync.Mutex
	settled bool // the first wait for backends is over (rebuild settled)
	synced  bool // the tables were built once: keep them current
	// versions counts changes per list (tools, prompts, resources); seen
	// is the version the client last listed, and listed whether it ever
	// did; notified is set when list_changed went out, until the client
	// lists again (one notification per change it has not seen yet).
	versions, seen   [3]uint64
	listed, notified [3]bool
	// gens are the backends' list generations the tables were last built
	// at (backends.Manager.ListGenerations).
	gens    [3]uint64
	subs    map[string]bool    // resource URIs the client subscribed to (subscribe.go)
	listens map[string]*listen // subscriptions/listen in flight, by request id (listen.go)

	tasks taskOwners // the tasks this session created (tasks.go); its own lock
}

// frontOptions are what a front is made with (newFront), fixed for its
// life.
type frontOptions struct {
	pipe, unaskable bool
	// version, if set, makes a sessionless front: one HTTP request served
	// on its own at that version, as if initialized, since it carries no
	// handshake of its own.
	version string
	client  string // the client's name until it says its own (Call's caller)
	// declared, if not nil, is what the client declared, from a sealed
	// session id: the front starts identified and initialized (adopt).
	declared *declared
	sealed   bool
	issuer   string
}

// declared is what a client declares of itself: at initialize, or in the
// _meta of its first request of the per-request era. A value is never
// changed once stored in front.decl. To add a field a client declares,
// add it here and set it in identify, and seal it with the session's id
// (sessionState: stateOf and declared, sessionseal.go).
type declared struct {
	identified bool            // set by identify; the defaults (newFront) are not
	version    string          // the negotiated version (handshake era), or the sessionless front's
	client     string          // clientInfo.name
	caps       json.RawMessage // the client's capabilities, as it wrote them
	backend    json.RawMessage // what backends are told of them (backendCaps)
	naming     namer           // how the client's tools and prompts are named (namerFor)
	// maxTools is the most tools the client's tools/list holds before it
	// holds the meta tools instead (tools_mode: auto, clients.go); 0: no
	// cap. The meta tools are there for such a client, listed or not.
	maxTools int
}

// grant is who the front serves and what it may see. A value is never
// changed once stored in front.gr.
type grant struct {
	// who is the client's principal (the HTTP front's authentication),
	// nil on stdio and the command line; access is what the policy lets
	// it see, nil for everything (access.go).
	who      *authn.Principal
	access   *policy.Decision
	identity string // the principal's key for the audit log ("" when anonymous)
	// profile is the profile the front serves (gateway.profiles), "" for
	// none; access is bounded by it (access.go).
	profile string
	// up is who the front's requests are made for at a server reached
	// per caller (upstream.go), made from who; nil for nobody.
	up *backends.Caller
}

// tables are the front's routes and lists, built by rebuild from the
// answer tools and the backends' lists under the client's names and what
// the policy lets it see. A value is never changed once stored in
// front.tab.
type tables struct {
	tools     map[string]toolRoute // front name → route
	ownNames  map[string][]string  // own name of an app's backend's tool → front names (apps.go)
	known     map[string]toolRoute // every backend tool ever listed, for orphans
	findIndex *toolsearch.Index    // what gateway.find_tools searches (lazy mode)
	// lazyListed: the tools/list the tables hold is lazy mode's (the
	// meta tools), for tools_mode: lazy or a client over its maxTools.
	lazyListed bool
	prompts    map[string]promptRoute        // front name → route
	res        map[resourceKey]resourceRoute // resource or template → where it goes (resources.go)
	ownUI      map[string][]string           // a backend's own ui:// URI → the URIs it is shown as
	// deniedPrompts and deniedRes are what the policy hides of the
	// prompts and resources, to report a request for one (hidden).
	deniedPrompts map[string]promptRoute
	deniedRes     map[resourceKey]string
	// The lists as the session answers them (lists.go): each definition
	// as its backend wrote it (under the front name), in listing order.
	toolDefs, promptDefs, resourceDefs, templateDefs []json.RawMessage
	templates                                        []templateRoute // listing order (resources.go)
}

// noTables are the tables before the first rebuild; never written.
var noTables tables

// noDeclared is what a front not made by newFront declares; never written.
var noDeclared declared

// noGrant is the grant before setCaller; never written.
var noGrant grant

// tables returns the front's current tables, to read without a lock.
func (f *front) tables() *tables {
	if t := f.tab.Load(); t != nil {
		return t
	}
	return &noTables
}

// declared returns what the client declared (the defaults until it did).
func (f *front) declared() *declared {
	if d := f.decl.Load(); d != nil {
		return d
	}
	return &noDeclared // a front not made by newFront (tests)
}

// grant returns who the front serves and what it may see.
func (f *front) grant() *grant {
	if c := f.gr.Load(); c != nil {
		return c
	}
	return &noGrant
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
	tell := real && !f.sessionless && f.initialized.Load() &&
		(f.sealed || f.listed[list] && !f.notified[list] && f.seen[list] != f.versions[list])
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
	old := f.decl.Load()
	if old != nil && old.identified {
		return false
	}
	d := &declared{identified: true, version: version, client: client, caps: caps,
		backend: backends.Declared(caps), naming: f.g.namerFor(client), maxTools: f.g.maxToolsFor(client)}
	if !f.decl.CompareAndSwap(old, d) {
		return false // another request identified it first
	}
	if !f.sessionless {
		f.log.Info("client connected", "client", client, "protocol", version, "strict_names", d.naming.strict,
			"max_name", d.naming.limit(), "max_tools", d.maxTools, "profile", f.grant().profile)
	}
	return true
}

// rename makes n the naming of Gateway.Call's own front, which tries the
// namings in turn for a name it was given: a new declared value, since a
// stored one is never changed. No client declares anything to such a
// front, and no other goroutine identifies it.
func (f *front) rename(n namer) {
	d := *f.declared()
	d.naming = n
	f.decl.Store(&d)
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
	if d := f.declared(); d.backend != nil {
		return d.backend
	}
	return json.RawMessage(`{}`) // not identified: it declared nothing
}

// isSessionless reports whether the front serves a request on its own.
func (f *front) isSessionless() bool { return f.sessionless }

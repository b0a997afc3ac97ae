package backends

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What backends are told about the client, and what they tell it.
//
// With Options.AwaitClient (the stdio gateway: one client, one set of
// backends) the processes start at once, but each backend's initialize
// waits for SetClientCapabilities, so that a backend is declared the
// client's own capabilities: a backend told about sampling the client
// lacks would offer tools that always fail, and one not told about an
// extension the client has (MCP Apps' io.modelcontextprotocol/ui) may
// leave out what it offers with it. Without it (HTTP: many clients share
// the backends; the sub-commands: no client) backends are declared what
// the gateway relays (roots, sampling, elicitation) when Hooks.Request
// is set, and a request a client cannot answer fails there, and the one
// extension the gateway itself serves, MCP Apps (sharedCaps). That is what
// a backend's session is told (initialize; server/discover and the lists
// in the per-request era); a request of the per-request era made for a client
// carries that client's own (CallOptions.ClientCaps), since such a
// backend's capabilities are per request.

// withheld reports whether a client capability is kept from backends:
// tasks, because a backend's tasks/* requests to the client are not
// routed, and experimental, whose requests the gateway could not route
// either. Everything else — roots, sampling, elicitation, extensions, and
// capabilities newer than the gateway — is declared as the client wrote
// it, but the tasks extension (TasksExtension): a request of 2026-07-28
// declares it itself, and a backend that creates a task for a request that
// did not would answer a client with a task it never asked for.
func withheld(name string) bool {
	return name == "tasks" || name == "experimental"
}

// AppsExtension is the name of the MCP Apps extension
// (capabilities.extensions), which lets a server's tools show a UI.
const AppsExtension = "io.modelcontextprotocol/ui"

// TasksExtension is the name of the tasks extension of 2026-07-28
// (SEP-2663, capabilities.extensions): a server may answer a tools/call
// with a task, polled with tasks/get.
const TasksExtension = "io.modelcontextprotocol/tasks"

// sharedExtensions are the extensions backends shared by many clients are
// told of: MCP Apps, as a host that renders them declares it. Hosts that
// render apps would lose them if it were not, and other clients lose
// nothing (a tool with an app still answers in text; app-only tools are
// kept from their lists by the gateway).
const sharedExtensions = `{"` + AppsExtension + `":{"mimeTypes":["text/html;profile=mcp-app"]}}`

// sharedCaps are the client capabilities backends are declared when no
// one client's are known: what the gateway relays (given relay), and MCP
// Apps.
func sharedCaps(relay bool) json.RawMessage {
	if relay {
		return json.RawMessage(`{"roots":{},"sampling":{},"elicitation":{},"extensions":` + sharedExtensions + `}`)
	}
	return json.RawMessage(`{"extensions":` + sharedExtensions + `}`)
}

// clientCaps is what SetClientCapabilities recorded.
type clientCaps struct {
	caps json.RawMessage // the capabilities object declared to backends
	at   time.Time       // when it was set
	era  wire.Era        // the era the client speaks (era.go)
}

// Declared returns the capabilities backends are told of a client of the
// handshake era that declared caps (its initialize's): every member as the
// client wrote it, but those withheld (tasks, experimental, the tasks
// extension). It is never nil: a client that declared nothing is told as
// {}.
func Declared(caps json.RawMessage) json.RawMessage {
	out := json.RawMessage(`{}`)
	_ = wire.EachMember(caps, func(name string, v json.RawMessage) {
		if withheld(name) {
			return
		}
		if name == "extensions" && wire.Member(v, TasksExtension) != nil {
			v, _ = wire.SetMember(v, TasksExtension, nil)
		}
		out, _ = wire.SetMember(out, name, v)
	})
	return out
}

// SetClientCapabilities records the client's capabilities (the raw
// "capabilities" of its initialize, or of a request's _meta in the
// per-request era) and lets the backends waiting for them
// (Options.AwaitClient) start their session, in the client's era unless
// configured otherwise (era.go), declared as Declared says. The first call
// counts; later ones, and any call without AwaitClient, do nothing.
func (m *Manager) SetClientCapabilities(caps json.RawMessage, clientEra wire.Era) {
	if !m.opts.AwaitClient {
		return
	}
	out := Declared(caps)
	m.clientOnce.Do(func() {
		m.client.Store(&clientCaps{caps: out, at: time.Now(), era: clientEra})
		close(m.clientSet)
	})
}

// awaitClient waits, when the Manager was told to, until the client's
// capabilities are known, ctx is done, or stop is closed; it reports
// whether they are known (or not awaited).
func (m *Manager) awaitClient(ctx context.Context, stop <-chan string) (string, bool) {
	if !m.opts.AwaitClient {
		return "", true
	}
	select {
	case <-m.clientSet:
		return "", true
	case r := <-stop:
		return r, false
	case <-ctx.Done():
		return "stopped", false
	}
}

// clientInfo is who the gateway says it is to backends.
func (m *Manager) clientInfo() *mcp.Implementation {
	if m.opts.ClientInfo != nil {
		return m.opts.ClientInfo
	}
	return &mcp.Implementation{Name: "mcp-gateway"}
}

// clientCaps are the client capabilities backends are told: the client's
// own once known (AwaitClient), else sharedCaps.
func (m *Manager) clientCaps() json.RawMessage {
	if c := m.client.Load(); c != nil {
		return c.caps
	}
	return sharedCaps(m.hooks.Request != nil)
}

// initializeParams are the params of a backend's initialize request.
func (m *Manager) initializeParams() json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    m.clientCaps(),
		"clientInfo":      m.clientInfo(),
	})
	if err != nil {
		panic(err) // plain data
	}
	return b
}

// waitFrom is when the startup timeout of Wait starts counting: Start, or
// the client's initialize when backends waited for it.
func (m *Manager) waitFrom(start time.Time) time.Time {
	if c := m.client.Load(); c != nil && c.at.After(start) {
		return c.at
	}
	return start
}

// Initialized is what a ready backend answered to initialize.
type Initialized struct {
	Server       string
	Capabilities json.RawMessage // as the backend wrote it
	Instructions string
}

// Initialized returns what each backend clients are shown answered to
// initialize — the ready ones, and those in their first start as their
// snapshot says — in configuration order. Instructions the trust layer
// withholds are the pinned ones instead, or none.
func (m *Manager) Initialized() []Initialized {
	var out []Initialized
	for _, b := range m.backends() {
		b.mu.Lock()
		if sf := b.shownLocked(); sf != nil {
			out = append(out, Initialized{Server: b.cfg.Name, Capabilities: sf.capsRaw, Instructions: b.shownInstructionsLocked(sf)})
		}
		b.mu.Unlock()
	}
	return out
}

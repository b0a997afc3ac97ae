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
// waits for SetClientCapabilities, so that a backend is declared exactly
// the client's own roots, sampling and elicitation capabilities: a backend
// told about sampling the client lacks would offer tools that always fail.
// Without it (HTTP: many clients share the backends; the sub-commands: no
// client) backends are declared everything the gateway relays (roots,
// sampling, elicitation) when Options.OnRequest is set, and a request a
// client cannot answer fails there.

// relayed are the client capabilities the gateway can relay to a backend:
// the server-to-client requests HandleBackendRequest forwards.
func relayed(name string) bool {
	return name == "roots" || name == "sampling" || name == "elicitation"
}

// clientCaps is what SetClientCapabilities recorded.
type clientCaps struct {
	caps      json.RawMessage // the capabilities object declared to backends
	at        time.Time       // when it was set
	stateless bool            // the client speaks 2026-07-28 (era.go)
}

// SetClientCapabilities records the client's capabilities (the raw
// "capabilities" of its initialize, or of a request's _meta in the
// stateless era) and lets the backends waiting for them
// (Options.AwaitClient) start their session, in the client's era unless
// configured otherwise (era.go). Only the members the gateway relays are
// declared (roots, sampling, elicitation, each as the client wrote it). The
// first call counts; later ones, and any call without AwaitClient, do
// nothing.
func (m *Manager) SetClientCapabilities(caps json.RawMessage, stateless bool) {
	if !m.opts.AwaitClient {
		return
	}
	out := json.RawMessage(`{}`)
	_ = wire.EachMember(caps, func(name string, v json.RawMessage) {
		if relayed(name) {
			out, _ = wire.SetMember(out, name, v)
		}
	})
	m.clientOnce.Do(func() {
		m.client.Store(&clientCaps{caps: out, at: time.Now(), stateless: stateless})
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
// own once known (AwaitClient), else everything the gateway relays.
func (m *Manager) clientCaps() json.RawMessage {
	if c := m.client.Load(); c != nil {
		return c.caps
	}
	if m.opts.OnRequest != nil {
		return json.RawMessage(`{"roots":{},"sampling":{},"elicitation":{}}`)
	}
	return json.RawMessage(`{}`)
}

// initializeParams are the params of a backend's initialize request.
func (m *Manager) initializeParams() json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"protocolVersion": ProtocolVersion,
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
// snapshot says — in configuration order.
func (m *Manager) Initialized() []Initialized {
	var out []Initialized
	for _, b := range m.backends() {
		b.mu.Lock()
		if sf := b.shownLocked(); sf != nil {
			out = append(out, Initialized{Server: b.cfg.Name, Capabilities: sf.capsRaw, Instructions: sf.instructions})
		}
		b.mu.Unlock()
	}
	return out
}

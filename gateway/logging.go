package gateway

//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 on, but the gateway serves 2025-11-25 and earlier, where it is current.

import (
	"encoding/json"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// Backends' log messages (notifications/message) reach every connected
// client, with the server's name in "logger", at up to logRate a second
// per backend (bursts as large); logging/setLevel from a client reaches
// every ready backend that declared logging. See docs/transparency.md.
const logRate = 100

// logLimit is the rate of each backend's messages forwarded to clients.
var logLimit = ratelimit.Options{Rate: logRate, Burst: logRate}

// BackendLog forwards a backend's notifications/message to the connected
// clients. It is called from the backend's read loop
// (backendNotification): the message is buffered and goes out when that loop
// is idle.
func (g *Gateway) BackendLog(server string, params json.RawMessage) {
	ok, dropped := g.logs.Allow(server, time.Now())
	if dropped > 0 {
		g.log.Warn("backend log messages not forwarded: over the rate limit", "server", server, "dropped", dropped, "limit_per_second", logRate)
	}
	if !ok {
		return
	}
	params, err := taggedLog(server, params)
	if err != nil {
		g.log.Debug("dropped a backend log message", "server", server, "err", err)
		return
	}
	if g.redacts() {
		params, _ = safetext.MaskShapes(params)
	}
	// Only a session of the handshake era hears of log messages outside
	// its requests: one of the per-request era asks per request. A client
	// the policy hides the server from hears nothing of it.
	g.broadcast(wire.AppendRequest(nil, nil, "notifications/message", params), func(f *front) bool {
		return f.initialized.Load() && !f.sessionless && f.grant().access.AllowsServer(server)
	})
}

// taggedLog returns the params with "logger" naming the server: the
// server's name, or "server/logger" when the backend named a logger.
// Other members keep their order and bytes.
func taggedLog(server string, params json.RawMessage) (json.RawMessage, error) {
	params, err := wire.Compact(params)
	if err != nil {
		return nil, err
	}
	out := []byte{'{'}
	tagged := false
	add := func(name string, value []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(name)
		out = append(append(append(out, key...), ':'), value...)
	}
	err = wire.EachMember(params, func(name string, value json.RawMessage) {
		if name == "logger" {
			logger := server
			if own, ok := wire.Unquote(value); ok && own != "" {
				logger += "/" + own
			}
			value, _ = json.Marshal(logger)
			tagged = true
		}
		add(name, value)
	})
	if err != nil {
		return nil, err
	}
	if !tagged {
		logger, _ := json.Marshal(server)
		add("logger", logger)
	}
	return append(out, '}'), nil
}

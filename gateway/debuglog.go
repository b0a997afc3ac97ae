package gateway

import "github.com/mcp-gateway/mcp-gateway/backends/wire"

// describeMessage is what the debug log says of a message on the client's
// wire: its method ("response" for a response) and its id. Never its
// params, result or error data: they hold the user's arguments and query
// text.
func describeMessage(msg []byte) []any {
	m, err := wire.Decode(msg)
	if err != nil {
		// The first part of a long result (written in parts) is no whole
		// message; nor is bad input, which the session answers and logs.
		return nil
	}
	method := m.Method
	if !m.HasMethod {
		method = "response"
	}
	if m.ID == nil {
		return []any{"method", method}
	}
	return []any{"method", method, "id", string(m.ID)}
}

package gateway

import (
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// rootsChanged passes the client's notifications/roots/list_changed on to
// every ready backend, which then asks for the roots again (through
// handleBackendRequest). go-sdk gets it too.
func (f *front) rootsChanged(params json.RawMessage) {
	b := f.g.opts.Backends
	if params != nil {
		var err error
		if params, err = wire.Compact(params); err != nil {
			return
		}
	}
	b.Notify(methodRootsChanged, params)
}

package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Over HTTP, a request of the per-request era (2026-07-28) says in headers
// what its body says — its version (Mcp-Protocol-Version), its method
// (Mcp-Method), the tool, prompt or resource it names (Mcp-Name), and the
// arguments its tool marks with x-mcp-header (Mcp-Param-NAME) — so that
// proxies and load balancers can route it without reading the body. A
// header that disagrees with the body, or is missing, is refused with
// -32020 (HTTP 400), as go-sdk's server refuses it; the gateway checks
// them before the request reaches a backend, which never sees them. Each
// is given once: of a header given twice, the gateway would compare one
// line and a proxy might route by the other (or by both, joined).

const (
	headerVersion = wire.HeaderVersion
	headerMethod  = wire.HeaderMethod
	headerName    = wire.HeaderName
)

// headerError is a request's -32020 error.
func headerError(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeHeaderMismatch, Message: msg}
}

// checkHeaders checks a message of a POST against its headers: a request
// that names a version of the per-request era in _meta, or in the header,
// must name the same in both; with the header of that era, the method and
// name headers must match the body. schema finds a tools/call's tool's
// input schema, whose x-mcp-header properties are checked against their
// Mcp-Param headers.
func checkHeaders(h http.Header, m *inMsg, schema func(tool string) json.RawMessage) *jsonrpc.Error {
	for key, vs := range h {
		if len(vs) > 1 && strings.HasPrefix(key, "Mcp-") {
			return headerError(key + " header is given more than once")
		}
	}
	hv := h.Get(headerVersion)
	if m.IsCall() {
		mv := m.version
		if wire.EraOf(mv) == wire.PerRequestEra || wire.EraOf(hv) == wire.PerRequestEra {
			switch {
			case hv == "":
				return headerError(headerVersion + " header is required for requests carrying _meta." + metaProtocolVersion)
			case mv == "":
				return errInvalidParams(`missing or invalid _meta field "` + metaProtocolVersion + `"`)
			case hv != mv:
				return headerError(headerVersion + " header " + strconv.Quote(hv) + " does not match the request's " + metaProtocolVersion + " " + strconv.Quote(mv))
			}
		}
	}
	if wire.EraOf(hv) == wire.HandshakeEra {
		return nil
	}
	switch got := h.Get(headerMethod); {
	case got == "":
		return headerError("missing required " + headerMethod + " header")
	case got != m.Method:
		return headerError(headerMethod + " header " + strconv.Quote(got) + " does not match the body's method " + strconv.Quote(m.Method))
	}
	member := wire.NameMember(m.Method)
	if member == "" {
		return nil
	}
	name, ok := m.name, m.nameOK
	switch got := h.Get(headerName); {
	case !ok:
		return nil // the session says what is wrong with the params
	case got == "":
		return headerError("missing required " + headerName + " header for " + m.Method)
	case got != name:
		return headerError(headerName + " header " + strconv.Quote(got) + " does not match the body's " + member + " " + strconv.Quote(name))
	}
	if m.Method == "tools/call" && schema != nil {
		return checkParamHeaders(h, m.param("arguments"), schema(name))
	}
	return nil
}

// checkParamHeaders checks the arguments a tool's input schema marks with
// x-mcp-header against their Mcp-Param headers: present exactly when the
// argument is, and equal to it.
func checkParamHeaders(h http.Header, args, schema json.RawMessage) *jsonrpc.Error {
	for _, b := range wire.HeaderBindings(schema) {
		header := wire.HeaderParam + b.Header
		got := h.Get(header)
		v, present := wire.ArgumentAt(args, b.Path)
		if !present || string(v) == "null" {
			if got != "" {
				return headerError("unexpected " + header + " header for the absent argument " + strings.Join(b.Path, "."))
			}
			continue
		}
		if got == "" {
			return headerError("missing " + header + " header for the argument " + strings.Join(b.Path, "."))
		}
		decoded, ok := wire.DecodeHeaderValue(got)
		if !ok {
			return headerError(header + " header is not valid Base64")
		}
		if !wire.HeaderMatches(decoded, v) {
			return headerError(header + " header does not match the argument " + strings.Join(b.Path, "."))
		}
	}
	return nil
}

// errorStatus is the HTTP status of a request of the per-request era
// answered with a JSON-RPC error, as 2026-07-28 says: 404 for a method
// not found, 400 for params, version, header or capability errors; 0 for
// any other (200).
func errorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, codeUnsupportedVersion, codeMissingClientCap, codeHeaderMismatch:
		return http.StatusBadRequest
	case codeRateLimited:
		return http.StatusTooManyRequests
	}
	return 0
}

package gateway

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// paramsError rewrites go-sdk's answer to params it could not decode into
// one a client can act on. go-sdk's message names its own Go types and
// quotes the whole params ("handling 'tools/list': invalid params:
// unmarshaling "{\"cursor\":5}" into a *mcp.ListToolsParams: json: cannot
// unmarshal "5}" into Go struct field mcp.ListToolsParams.cursor of type
// string"): a client knows neither type, and the quote echoes up to a whole
// message back. The rewrite says which member is wrong and what JSON type it
// must have ("cursor must be a string"), as the gateway's own -32602 errors
// do. ok is false for any other error.
func paramsError(msg string) (e *jsonrpc.Error, ok bool) {
	_, rest, ok := strings.Cut(msg, "unmarshaling ")
	if !ok {
		return nil, false
	}
	// The quoted params end at the last " into a *T: ", before the decoder's
	// own error; the params may contain that text themselves.
	i := strings.LastIndex(rest, " into a *")
	if i < 0 {
		return nil, false
	}
	_, jsonErr, ok := strings.Cut(rest[i:], ": ")
	if !ok {
		return nil, false
	}
	return errInvalidParams(decodeReason(jsonErr)), true
}

// decodeReason turns a JSON decoder's error about params into a reason in
// JSON's terms.
func decodeReason(jsonErr string) string {
	const field, value, ofType = "into Go struct field ", "into Go value of type ", " of type "
	got := inputType(jsonErr)
	switch {
	case strings.Contains(jsonErr, field):
		_, rest, _ := strings.Cut(jsonErr, field)
		path, goType, _ := strings.Cut(rest, ofType)
		if want := jsonType(goType); want != "" {
			return memberPath(path) + " must be " + want
		}
		if got != "" {
			return memberPath(path) + " cannot be " + got
		}
		return memberPath(path) + " has the wrong type"
	case strings.Contains(jsonErr, value):
		// Every method's params decode into a struct.
		return "params must be an object"
	case strings.Contains(jsonErr, "nesting depth"):
		return "params nest too deeply"
	default:
		return "params do not match the method's schema"
	}
}

// inputType names the JSON type of the input a decoder's error quotes
// ("json: cannot unmarshal "5}" into ..."), or "" if it quotes none.
func inputType(jsonErr string) string {
	_, rest, ok := strings.Cut(jsonErr, `cannot unmarshal "`)
	if !ok || rest == "" {
		return ""
	}
	switch c := rest[0]; {
	case c == '\\' && len(rest) > 1 && rest[1] == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't', c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-', c >= '0' && c <= '9':
		return "a number"
	}
	return ""
}

// memberPath drops the Go struct name from a decoder's field path:
// "mcp.ListToolsParams.cursor" is "cursor", "mcp.CallToolParams._meta.x"
// is "_meta.x". A member name never starts with an upper-case letter in MCP,
// a Go type name always does.
func memberPath(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if p != "" && p[0] >= 'A' && p[0] <= 'Z' {
			if i+1 < len(parts) {
				return strings.Join(parts[i+1:], ".")
			}
			break
		}
	}
	return "a member"
}

// jsonType names the JSON type a Go type decodes from, or "" for a named
// type whose kind its name does not tell (mcp.LoggingLevel is a string).
func jsonType(goType string) string {
	goType = strings.TrimLeft(strings.TrimSpace(goType), "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	}
	return ""
}

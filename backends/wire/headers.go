package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Over Streamable HTTP, a request of the stateless era (2026-07-28) says
// in headers what its body says, so that proxies and load balancers can
// route it without reading the body: its version (Mcp-Protocol-Version),
// its method (Mcp-Method), the tool, prompt or resource it names
// (Mcp-Name), and each argument its tool's input schema marks with
// x-mcp-header (Mcp-Param-NAME). The gateway checks them on requests it
// receives (package gateway) and writes them on requests it sends to a
// remote backend (package backends); both use what is here.

// The standard headers.
const (
	HeaderVersion = "Mcp-Protocol-Version"
	HeaderMethod  = "Mcp-Method"
	HeaderName    = "Mcp-Name"
	HeaderParam   = "Mcp-Param-"
)

// NameMember is the params member that Mcp-Name carries for method, or ""
// for a method without one.
func NameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// HeaderBinding is an argument a tool's input schema marks with
// x-mcp-header: its path among the arguments and its header's name
// (after Mcp-Param-).
type HeaderBinding struct {
	Path   []string
	Header string
}

// HeaderBindings walks an input schema's properties, nested ones too, for
// x-mcp-header marks.
func HeaderBindings(schema json.RawMessage) []HeaderBinding {
	return bindings(Member(schema, "properties"), nil)
}

func bindings(props json.RawMessage, prefix []string) []HeaderBinding {
	var out []HeaderBinding
	_ = EachMember(props, func(name string, prop json.RawMessage) {
		path := append(append([]string(nil), prefix...), name)
		if hdr, ok := Unquote(Member(prop, "x-mcp-header")); ok && hdr != "" {
			out = append(out, HeaderBinding{path, hdr})
		}
		if nested := Member(prop, "properties"); nested != nil {
			out = append(out, bindings(nested, path)...)
		}
	})
	return out
}

// ArgumentAt finds the argument at path in args, a JSON object.
func ArgumentAt(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, p := range path {
		found := false
		_ = EachMember(cur, func(name string, v json.RawMessage) {
			if name == p && !found {
				cur, found = v, true
			}
		})
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// SetStandardHeaders puts on h the standard headers of m, a request of the
// stateless era: its version (from its _meta), method, name, and the
// Mcp-Param headers its tool's input schema asks for (schema, if not nil,
// finds a tool's). It reports whether m is of that era; a request of the
// handshake era gets nothing.
func SetStandardHeaders(h http.Header, m *Message, schema func(tool string) json.RawMessage) bool {
	version, _ := Unquote(Member(Member(m.Params, "_meta"), "io.modelcontextprotocol/protocolVersion"))
	if version < "2026-07-28" {
		return false
	}
	h.Set(HeaderVersion, version)
	h.Set(HeaderMethod, m.Method)
	member := NameMember(m.Method)
	if member == "" {
		return true
	}
	name, ok := Unquote(Member(m.Params, member))
	if !ok {
		return true
	}
	h.Set(HeaderName, nameValue(name))
	if m.Method != "tools/call" || schema == nil {
		return true
	}
	args := Member(m.Params, "arguments")
	for _, b := range HeaderBindings(schema(name)) {
		v, present := ArgumentAt(args, b.Path)
		if !present {
			continue
		}
		if s, ok := headerText(v); ok {
			h.Set(HeaderParam+b.Header, EncodeHeaderValue(s))
		}
	}
	return true
}

// headerText is an argument as a header carries it: a string as is, a
// boolean as true or false, an integer within JavaScript's safe range in
// decimal; other values have no header form.
func headerText(arg json.RawMessage) (string, bool) {
	arg = bytes.TrimSpace(arg)
	if s, ok := Unquote(arg); ok {
		return s, true
	}
	switch string(arg) {
	case "true", "false":
		return string(arg), true
	}
	var n float64
	if json.Unmarshal(arg, &n) != nil || n != math.Trunc(n) || math.Abs(n) > 1<<53-1 {
		return "", false
	}
	return strconv.FormatInt(int64(n), 10), true
}

// HeaderMatches reports whether a header's (decoded) value is the
// argument arg.
func HeaderMatches(header string, arg json.RawMessage) bool {
	arg = bytes.TrimSpace(arg)
	if s, ok := Unquote(arg); ok {
		return header == s
	}
	if string(arg) == "true" || string(arg) == "false" {
		return header == string(arg)
	}
	want, ok := headerText(arg)
	if !ok {
		return false
	}
	h, err := strconv.ParseFloat(header, 64)
	w, _ := strconv.ParseFloat(want, 64)
	return err == nil && h == w
}

// nameValue is Mcp-Name's value: the name as is, as go-sdk sends and
// checks it (names and URIs are printable), unless it holds bytes no
// header may carry.
func nameValue(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return EncodeHeaderValue(name)
		}
	}
	return name
}

// EncodeHeaderValue writes s as a header value: as is when it is printable
// ASCII without leading or trailing blanks, else =?base64?...?=.
func EncodeHeaderValue(s string) string {
	plain := s == "" || s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// DecodeHeaderValue decodes a value written =?base64?...?=; ok is false
// when its Base64 is not valid.
func DecodeHeaderValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	return string(b), err == nil
}

package wire

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Over Streamable HTTP, a request of the per-request era (2026-07-28) says
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
// for a method without one: the tasks extension (SEP-2663) adds the task
// id of tasks/get, tasks/update and tasks/cancel, so that a load balancer
// can send a task's requests where the task is.
func NameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
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

// CheckHeaderMarks checks the x-mcp-header marks of an input schema, as a
// client of 2026-07-28 must before it calls the tool (a tool whose marks
// are invalid is not called): each on a property of type string, integer
// or boolean, each a header name (an HTTP token), no two the same but for
// case, nested properties included.
func CheckHeaderMarks(schema json.RawMessage) error {
	return checkMarks(Member(schema, "properties"), "", map[string]bool{})
}

func checkMarks(props json.RawMessage, prefix string, seen map[string]bool) error {
	var err error
	_ = EachMember(props, func(name string, prop json.RawMessage) {
		if err != nil {
			return
		}
		path := prefix + name
		if mark := Member(prop, "x-mcp-header"); mark != nil {
			typ, _ := Unquote(Member(prop, "type"))
			hdr, isString := Unquote(mark)
			switch {
			case typ != "string" && typ != "integer" && typ != "boolean":
				err = fmt.Errorf("property %q: x-mcp-header on a property of type %s (only string, integer, boolean)", path, cmp.Or(string(Member(prop, "type")), "(none)"))
			case !isString || !isToken(hdr):
				err = fmt.Errorf("property %q: x-mcp-header %s is not a header name", path, mark)
			case seen[strings.ToLower(hdr)]:
				err = fmt.Errorf("property %q: x-mcp-header %q marks another property too", path, hdr)
			}
			seen[strings.ToLower(hdr)] = true
		}
		if err == nil {
			if nested := Member(prop, "properties"); nested != nil {
				err = checkMarks(nested, path+".", seen)
			}
		}
	})
	return err
}

// isToken reports whether s is an HTTP token (RFC 9110 5.6.2), the syntax
// of a header's name.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
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
// per-request era: its version (from its _meta), method, name, and the
// Mcp-Param headers its tool's input schema asks for (bindings, if not nil,
// gives a tool's HeaderBindings). It reports whether m is of that era; a
// request of the handshake era gets nothing.
func SetStandardHeaders(h http.Header, m *Message, bindings func(tool string) []HeaderBinding) bool {
	version, _ := Unquote(Member(Member(m.Params, "_meta"), "io.modelcontextprotocol/protocolVersion"))
	if EraOf(version) != PerRequestEra {
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
	if m.Method != "tools/call" || bindings == nil {
		return true
	}
	args := Member(m.Params, "arguments")
	for _, b := range bindings(name) {
		v, present := ArgumentAt(args, b.Path)
		if !present {
			continue
		}
		if s, ok := headerText(v); ok {
			h.Set(HeaderParam+b.Header, encodeHeaderValue(s))
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
	if len(arg) == 0 || arg[0] != '-' && !isDigit(arg[0]) {
		return "", false // null (which would decode as 0), an object, an array
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
			return encodeHeaderValue(name)
		}
	}
	return name
}

// The wrapper of a header value written in Base64.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// encodeHeaderValue writes s as a header value: as is when it is printable
// ASCII without leading or trailing blanks, else =?base64?...?= — and so
// is a value that would read as written that way.
func encodeHeaderValue(s string) string {
	plain := s == "" || s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain && !(strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

// DecodeHeaderValue decodes a value written =?base64?...?=; ok is false
// when its Base64 is not valid.
func DecodeHeaderValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, base64Suffix)
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	return string(b), err == nil
}

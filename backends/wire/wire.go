// Package wire is mcp-gateway's JSON-RPC 2.0 envelope codec, shared by the
// client side (package gateway) and the backend side (package backends), so
// that both read and write messages the same way.
//
// It is strict where go-sdk's decoder is strict — member names are
// case-sensitive, "jsonrpc" must be "2.0", an id is a string or a number —
// and exact where a proxy must be: ids, params, results and errors are kept
// as the raw bytes of the message, never decoded into float64, so a reply
// carries the id exactly as the peer sent it.
//
// It lives outside backends/internal because the gateway package needs it
// too (Go's internal rule would hide it from gateway/); it is not API.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// MaxMessage bounds one message from a backend, a child's stdout line or a
// remote server's message. A longer one is a protocol violation; the
// session is ended (the backend is treated as crashed) rather than letting
// one server exhaust the gateway's memory.
const MaxMessage = 256 << 20

// Message is one decoded JSON-RPC message. Its raw members point into the
// bytes passed to Decode: copy what must outlive them.
type Message struct {
	ID     json.RawMessage // nil when absent; "null" when null
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage

	HasMethod bool
}

// EachParam calls fn for each member of m's params in order, names
// unescaped as EachMember gives them, and reports whether the params are an
// object (if not, fn is not called). m must be as Decode returned it: the
// params are valid JSON and are not checked again.
func (m *Message) EachParam(fn func(name string, value json.RawMessage)) bool {
	b := trimSpace(m.Params)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	return members(b, func(key, value []byte) { fn(intern(key), value) }) == nil
}

// IsCall reports whether m is a request that expects a response.
func (m *Message) IsCall() bool { return m.HasMethod && m.ID != nil }

// IsNotification reports whether m is a request without an id.
func (m *Message) IsNotification() bool { return m.HasMethod && m.ID == nil }

// IsResponse reports whether m is a response.
func (m *Message) IsResponse() bool { return !m.HasMethod }

// DecodeError says why bytes are not a JSON-RPC message. ID is the
// message's id when it is a valid one, so the error reply can carry it;
// otherwise nil (the reply's id is null).
type DecodeError struct {
	Parse  bool // not JSON at all (-32700); otherwise not a JSON-RPC message (-32600)
	Reason string
	ID     json.RawMessage
}

func (e *DecodeError) Error() string { return e.Reason }

// Decode decodes one message. body must be a single JSON value.
func Decode(body []byte) (Message, error) {
	var m Message
	if !utf8.Valid(body) {
		return m, &DecodeError{Parse: true, Reason: "invalid UTF-8"}
	}
	b := trimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		switch {
		case !Valid(body):
			return m, &DecodeError{Parse: true, Reason: "invalid JSON"}
		case b[0] == '[':
			return m, &DecodeError{Reason: "batches are not supported"}
		}
		return m, &DecodeError{Reason: "not a JSON object"}
	}
	// The envelope is read as its JSON is validated, in one walk: each
	// member's value is checked where it lies (validValue), so nothing
	// is walked twice.
	var e envelope
	it := envelopeIter{b: b}
	for it.next() {
		e.member(it.key, it.value)
	}
	if it.bad {
		return Message{}, &DecodeError{Parse: true, Reason: "invalid JSON"}
	}
	return e.check()
}

// envelope is what Decode reads of a message's members: the message, and
// its version and method as given (raw).
type envelope struct {
	m               Message
	version, method json.RawMessage
}

// member keeps one member of the envelope (the last, if repeated).
func (e *envelope) member(key, value []byte) {
	switch string(key) {
	case "jsonrpc":
		e.version = value
	case "id":
		e.m.ID = value
	case "method":
		e.method = value
	case "params":
		e.m.Params = value
	case "result":
		e.m.Result = value
	case "error":
		e.m.Error = value
	}
}

// check returns the message the members make: the version must be "2.0",
// the id one a reply can carry, the method a string; a response has its
// result or its error.
func (e *envelope) check() (Message, error) {
	m, version, method := e.m, e.version, e.method
	validID := ValidID(m.ID)
	fail := func(reason string) (Message, error) {
		e := &DecodeError{Reason: reason}
		if validID {
			e.ID = m.ID
		}
		return Message{}, e
	}
	if string(version) != `"2.0"` {
		return fail(`"jsonrpc" must be "2.0"`)
	}
	if m.ID != nil && !validID {
		return fail("id must be a string or a number")
	}
	if method != nil {
		name, ok := Unquote(method)
		if !ok {
			return fail("method must be a string")
		}
		m.Method = name
		m.HasMethod = true
		return m, nil
	}
	if m.ID == nil {
		return fail("a response needs an id")
	}
	// A null beside the other member is no member: go-sdk reads it so, and
	// some servers write "error":null in every result.
	switch {
	case m.Result != nil && string(m.Error) == "null":
		m.Error = nil
	case m.Error != nil && string(m.Result) == "null":
		m.Result = nil
	}
	if (m.Result == nil) == (m.Error == nil) {
		return fail("a response has a result or an error")
	}
	return m, nil
}

// ValidID reports whether raw is a JSON string or number (a usable id).
func ValidID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || c >= '0' && c <= '9'
}

// members calls fn for each member of the JSON object b, which must be
// valid JSON; keys are unescaped, values are raw and point into b.
func members(b []byte, fn func(key, value []byte)) error {
	it := memberIter{b: b}
	for it.next() {
		fn(it.key, it.value)
	}
	return it.err
}

// envelopeIter walks the members of b, a trimmed message that starts with
// '{', and validates it as it goes: each name, each value where it lies
// (validValue, nested at most maxNesting-1 deep below the object, as Valid
// counts), the commas, and that the object ends b. At the first byte that
// makes b no JSON, bad is set and next returns false.
type envelopeIter struct {
	b          []byte
	i          int // next position; 0 before the first member
	key, value []byte
	bad        bool
}

func (it *envelopeIter) next() bool {
	b := it.b
	if it.i == 0 {
		it.i = skipWS(b, 1) // past '{'
		if it.i < len(b) && b[it.i] == '}' {
			it.bad = it.i+1 != len(b)
			return false
		}
	} else {
		switch i := skipWS(b, it.i); {
		case i < len(b) && b[i] == ',':
			it.i = skipWS(b, i+1)
		case i < len(b) && b[i] == '}':
			it.bad = i+1 != len(b)
			return false
		default:
			it.bad = true
			return false
		}
	}
	i := it.i
	if i >= len(b) || b[i] != '"' {
		it.bad = true
		return false
	}
	end := validString(b, i)
	if end < 0 {
		it.bad = true
		return false
	}
	it.key = b[i+1 : end-1]
	if bytes.IndexByte(it.key, '\\') >= 0 {
		var s string
		_ = json.Unmarshal(b[i:end], &s) // a valid string: it cannot fail
		it.key = []byte(s)
	}
	if i = skipWS(b, end); i >= len(b) || b[i] != ':' {
		it.bad = true
		return false
	}
	i = skipWS(b, i+1)
	vend := validValue(b, i, maxNesting-1)
	if vend < 0 {
		it.bad = true
		return false
	}
	it.value, it.i = b[i:vend], vend
	return true
}

// memberIter walks the members of a JSON object that is valid JSON,
// without allocating unless a name has escapes.
type memberIter struct {
	b          []byte
	i          int // next position; 0 before the first member
	key, value []byte
	err        error
}

func (it *memberIter) next() bool {
	b := it.b
	if it.i == 0 {
		it.i = skipWS(b, 1) // past '{'
		if it.i < len(b) && b[it.i] == '}' {
			return false
		}
	} else {
		i := skipWS(b, it.i)
		if i >= len(b) || b[i] == '}' {
			return false
		}
		it.i = skipWS(b, i+1) // past ','
	}
	i := it.i
	if i >= len(b) || b[i] != '"' {
		return false
	}
	end := skipString(b, i)
	it.key = b[i+1 : end-1]
	if bytes.IndexByte(it.key, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(b[i:end], &s); err != nil {
			it.err = errors.New("bad member name")
			return false
		}
		it.key = []byte(s)
	}
	i = skipWS(b, end)
	i = skipWS(b, i+1) // past ':'
	vend := skipValue(b, i)
	it.value = b[i:vend]
	it.i = vend
	return true
}

// Unquote returns the string a JSON string value holds, and false if v is
// not a string. A string without escapes costs one allocation.
func Unquote(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return intern(inner), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// intern returns b as a string, without allocating for the method and
// member names every tools/call carries (the switch on string(b) does not
// convert): each allocation saved is one less per message.
func intern(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "_meta":
		return "_meta"
	case "progressToken":
		return "progressToken"
	}
	return string(b)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		// Most strings of a message are short (names, ids, small
		// values): a loop finds their end before a vector search would
		// have started; a longer one is searched.
		k := j
		for k < len(b) && k-j < 16 && b[k] != '"' {
			k++
		}
		if k < len(b) && b[k] != '"' {
			if r := bytes.IndexByte(b[k:], '"'); r >= 0 {
				k += r
			} else {
				k = len(b)
			}
		}
		if k >= len(b) {
			return len(b)
		}
		j = k
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// skipValue returns the index after the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

func trimSpace(b []byte) []byte {
	b = b[skipWS(b, 0):]
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\t' || b[n-1] == '\r' || b[n-1] == '\n') {
		n--
	}
	return b[:n]
}

var null = []byte("null")

// AppendRequest appends a request (id non-nil) or a notification (id nil)
// with compact params (or none) to buf.
func AppendRequest(buf []byte, id json.RawMessage, method string, params json.RawMessage) []byte {
	buf = append(buf, `{"jsonrpc":"2.0",`...)
	if id != nil {
		buf = append(buf, `"id":`...)
		buf = append(buf, id...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"method":`...)
	buf = AppendString(buf, method)
	if params != nil {
		buf = append(buf, `,"params":`...)
		buf = append(buf, params...)
	}
	return append(buf, '}')
}

// AppendResult appends a response; a nil id is null. The result, valid
// JSON, is compacted: values keep their bytes, whitespace between them goes
// (a line-delimited stream cannot carry a newline).
func AppendResult(buf []byte, id, result json.RawMessage) []byte {
	if id == nil {
		id = null
	}
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = appendCompact(buf, result)
	return append(buf, '}')
}

// appendCompact appends v, which must be valid JSON (Decode checked it),
// without insignificant whitespace; strings are copied as they are.
func appendCompact(buf []byte, v json.RawMessage) []byte {
	if !hasSpace(v) {
		return append(buf, v...)
	}
	for start, end := nextSegment(v, 0); start < end; start, end = nextSegment(v, end) {
		buf = append(buf, v[start:end]...)
	}
	return buf
}

// ResultParts returns a response to id with result (as AppendResult makes
// it) as parts to be written one after the other: the compacted result is
// not copied, its parts are slices of result. It fails (ok false) when the
// result would take more than maxParts slices, i.e. it has that much
// whitespace between its values; AppendResult is then the way.
func ResultParts(id, result json.RawMessage, maxParts int) (parts [][]byte, ok bool) {
	if id == nil {
		id = null
	}
	head := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":`)+len(id))
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, id...)
	head = append(head, `,"result":`...)
	parts = append(parts, head)
	for start, end := nextSegment(result, 0); start < end; start, end = nextSegment(result, end) {
		if len(parts) > maxParts { // the head and maxParts slices so far
			return nil, false
		}
		parts = append(parts, result[start:end])
	}
	return append(parts, []byte("}")), true
}

// hasSpace reports whether v holds a byte JSON counts as whitespace,
// inside strings or not. Four byte searches: bytes.ContainsAny builds its
// set on every call, which cost more than the search on a call's result.
func hasSpace(v []byte) bool {
	return bytes.IndexByte(v, ' ') >= 0 || bytes.IndexByte(v, '\n') >= 0 ||
		bytes.IndexByte(v, '\t') >= 0 || bytes.IndexByte(v, '\r') >= 0
}

// nextSegment returns the next run of v, from i on, that holds no
// whitespace between values (whitespace inside strings belongs to the run);
// start == end at the end of v. v must be valid JSON.
func nextSegment(v []byte, i int) (start, end int) {
	start = skipWS(v, i)
	i = start
	for i < len(v) && skipWS(v, i) == i {
		if v[i] == '"' {
			i = skipString(v, i)
		} else {
			i++
		}
	}
	return start, i
}

// AppendError appends an error response; a nil id is null.
func AppendError(buf []byte, id json.RawMessage, code int64, message string, data json.RawMessage) []byte {
	if id == nil {
		id = null
	}
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"error":{"code":`...)
	buf = strconv.AppendInt(buf, code, 10)
	buf = append(buf, `,"message":`...)
	buf = AppendString(buf, message)
	if len(data) > 0 {
		buf = append(buf, `,"data":`...)
		buf = append(buf, data...)
	}
	return append(buf, `}}`...)
}

// AppendString appends s as a JSON string, without HTML escaping, as
// encoding/json's Encoder with SetEscapeHTML(false) writes it; a string of
// printable ASCII is appended without the Encoder's cost.
func AppendString(buf []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	quoted, _ := Marshal(s) // a string always encodes
	return append(buf, quoted...)
}

// Marshal encodes v as json.Marshal does but without HTML escaping, as
// go-sdk writes JSON (a description's "<" stays "<"), and without the
// Encoder's newline. encoding/json sorts map keys, which makes the form
// canonical.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Truncate returns s if it has at most n bytes, else s cut to at most n
// bytes, where a character begins (half a character would reach a reader
// as a replacement or an escape), with mark ("…", "...") appended.
func Truncate(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + mark
}

// Compact returns v without insignificant whitespace, as one line carries it;
// v is returned as is when it has no newline. It fails if v is not JSON.
func Compact(v json.RawMessage) (json.RawMessage, error) {
	if bytes.IndexByte(v, '\n') >= 0 || bytes.IndexByte(v, '\r') >= 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		return c.Bytes(), nil
	}
	if !Valid(v) {
		return nil, errors.New("invalid JSON")
	}
	return v, nil
}

// EachMember calls fn for each member of obj, a JSON object, in order;
// names are unescaped and compared case-sensitively by the caller, values
// are raw and point into obj. It fails if obj is not a JSON object.
func EachMember(obj json.RawMessage, fn func(name string, value json.RawMessage)) error {
	b := trimSpace(obj)
	if len(b) == 0 || b[0] != '{' || !Valid(b) {
		return errors.New("not a JSON object")
	}
	return members(b, func(key, value []byte) { fn(intern(key), value) })
}

// Member returns the raw value of obj's member name (the last one, if
// repeated), or nil when obj has none or is not an object.
func Member(obj json.RawMessage, name string) json.RawMessage {
	b := trimSpace(obj)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var out json.RawMessage
	_ = members(b, func(key, value []byte) {
		if string(key) == name {
			out = value
		}
	})
	return out
}

// EachElement calls fn for each element of arr, a JSON array that is valid
// JSON (as every message is: Valid checked it on arrival), in order;
// values are raw and point into arr. It fails if arr is not an array.
func EachElement(arr json.RawMessage, fn func(value json.RawMessage)) error {
	b := trimSpace(arr)
	if len(b) == 0 || b[0] != '[' {
		return errors.New("not a JSON array")
	}
	i := skipWS(b, 1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for i < len(b) {
		end := skipValue(b, i)
		fn(b[i:end])
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return nil
}

// SetMember returns a copy of obj, a JSON object, with the value of its
// member name set to value: in its place when obj has it (later duplicates
// go), appended when not, removed when value is nil. The other members keep
// their order and their bytes.
func SetMember(obj json.RawMessage, name string, value json.RawMessage) (json.RawMessage, error) {
	out := make([]byte, 0, len(obj)+len(name)+len(value)+4)
	out = append(out, '{')
	done := false
	add := func(key string, v []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = AppendString(out, key)
		out = append(out, ':')
		out = append(out, v...)
	}
	err := EachMember(obj, func(key string, v json.RawMessage) {
		if key != name {
			add(key, v)
			return
		}
		if !done && value != nil {
			add(key, value)
		}
		done = true
	})
	if err != nil {
		return nil, err
	}
	if !done && value != nil {
		add(name, value)
	}
	return append(out, '}'), nil
}

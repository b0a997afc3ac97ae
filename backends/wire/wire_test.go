package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	cases := []struct {
		in           string
		id, method   string
		result       string // the result member, when the case has one
		errMember    string // the error member, likewise
		parse, fails bool
		errID        string
	}{
		{in: `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, id: "9007199254740993", method: "ping"},
		{in: ` { "method" : "a\"b" , "jsonrpc":"2.0", "id" : 1e30, "params":{"x":[1,{"y":"}"}]} } `, id: "1e30", method: `a"b`},
		{in: `{"jsonrpc":"2.0","id":"x\u0041","result":{}}`, id: `"x\u0041"`, result: `{}`},
		{in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, method: "notifications/initialized"},
		{in: `{"jsonrpc":"2.0","ID":7,"METHOD":"ping"}`, fails: true},
		{in: `{"JSONRPC":"2.0","id":7,"method":"ping"}`, fails: true, errID: "7"},
		{in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, fails: true},
		{in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, fails: true},
		{in: `{"jsonrpc":"2.0","id":8,"method":5}`, fails: true, errID: "8"},
		{in: `{"jsonrpc":"2.0","id":8}`, fails: true, errID: "8"},
		{in: `{"jsonrpc":"2.0","result":{}}`, fails: true},
		{in: `[]`, fails: true},
		{in: `{"jsonrpc":`, fails: true, parse: true},
		{in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", fails: true, parse: true},
		{in: `{"jsonrpc":"2.0","i\u0064":3,"method":"ping"}`, id: "3", method: "ping"},
		// A null beside the other member is no member (go-sdk reads it so,
		// and servers write it); two non-null ones are no response.
		{in: `{"jsonrpc":"2.0","id":4,"result":{"a":1},"error":null}`, id: "4", result: `{"a":1}`},
		{in: `{"jsonrpc":"2.0","id":5,"result":null,"error":{"code":1,"message":"x"}}`, id: "5", errMember: `{"code":1,"message":"x"}`},
		{in: `{"jsonrpc":"2.0","id":6,"result":null}`, id: "6", result: `null`},
		{in: `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}`, fails: true, errID: "7"},
		{in: `{"jsonrpc":"2.0","id":8,"result":null,"error":null}`, id: "8", result: `null`},
	}
	for _, c := range cases {
		m, err := Decode([]byte(c.in))
		if c.fails {
			de, ok := err.(*DecodeError)
			if !ok || de.Parse != c.parse || string(de.ID) != c.errID {
				t.Errorf("%s: err %#v, want a DecodeError (parse %v, id %q)", c.in, err, c.parse, c.errID)
			}
			continue
		}
		if err != nil || string(m.ID) != c.id || m.Method != c.method || string(m.Result) != c.result || string(m.Error) != c.errMember {
			t.Errorf("%s: %+v %v, want id %s method %q result %s error %s", c.in, m, err, c.id, c.method, c.result, c.errMember)
		}
	}
}

func TestAppend(t *testing.T) {
	got := AppendRequest(nil, json.RawMessage("1.5"), "<m>", json.RawMessage(`{"a":1}`))
	if string(got) != `{"jsonrpc":"2.0","id":1.5,"method":"<m>","params":{"a":1}}` {
		t.Errorf("request: %s", got)
	}
	got = AppendResult(nil, nil, json.RawMessage("{ \"a\" :\n 1.50 }"))
	if string(got) != `{"jsonrpc":"2.0","id":null,"result":{"a":1.50}}` {
		t.Errorf("result: %s", got)
	}
	got = AppendError(nil, json.RawMessage(`"x"`), -32600, "bad \"id\"", json.RawMessage(`{"k":1}`))
	if string(got) != `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"bad \"id\"","data":{"k":1}}}` {
		t.Errorf("error: %s", got)
	}
	if !json.Valid(got) || bytes.Contains(got, []byte("\n")) {
		t.Errorf("not one line of JSON: %s", got)
	}
}

func TestMember(t *testing.T) {
	obj := json.RawMessage(`{"requestId": 12345678901234567890, "RequestId": 1, "x":{"requestId":2}}`)
	if got := Member(obj, "requestId"); string(got) != "12345678901234567890" {
		t.Errorf("Member = %s", got)
	}
	if Member(json.RawMessage(`[1]`), "a") != nil {
		t.Error("Member of an array")
	}
}

func TestEachElement(t *testing.T) {
	for _, c := range []struct {
		arr  string
		want []string
	}{
		{`[]`, nil},
		{` [ ] `, nil},
		{`[1, "a,]\"", {"b":[2,3]} ,null]`, []string{`1`, `"a,]\""`, `{"b":[2,3]}`, `null`}},
		{`[[]]`, []string{`[]`}},
	} {
		var got []string
		if err := EachElement(json.RawMessage(c.arr), func(v json.RawMessage) { got = append(got, string(v)) }); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("EachElement(%s) = %q, %v; want %q", c.arr, got, err, c.want)
		}
	}
	if EachElement(json.RawMessage(`{"a":1}`), func(json.RawMessage) {}) == nil {
		t.Error("EachElement of an object succeeded")
	}
}

// EachElement of a valid array gives the elements encoding/json gives.
func FuzzEachElement(f *testing.F) {
	f.Add([]byte(`[1, "a,]\\"", {"b":[2,3]} ,null]`))
	f.Add([]byte(` [ [] , {} ] `))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		if !Valid(b) || json.Unmarshal(b, &want) != nil {
			return
		}
		var got []json.RawMessage
		if err := EachElement(b, func(v json.RawMessage) { got = append(got, v) }); err != nil {
			t.Fatalf("EachElement(%q): %v", b, err)
		}
		if !slices.EqualFunc(got, want, func(x, y json.RawMessage) bool { return string(x) == string(y) }) {
			t.Fatalf("EachElement(%q) = %q, want %q", b, got, want)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1,"}"]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`))
	for _, s := range []string{
		` {"id":1, "jsonrpc":"2.0", "method":"x"} `, `{}`, `{ }`, `{"a":1}x`, `{"a":1,}`, `{"a" 1}`, `{"a":}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":[[[]]]}} {}`, `[1]`, `1`, `"x"`, ``, `{"\u0069d":1,"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		// The same reading, and the same error, as JSON validated whole
		// and then the envelope walked.
		sm, serr := decodeSlow(b)
		if !reflect.DeepEqual(m, sm) || !reflect.DeepEqual(err, serr) {
			t.Fatalf("Decode(%q) = %+v, %v; validated whole, then walked: %+v, %v", b, m, err, sm, serr)
		}
		if err == nil && m.ID != nil && !ValidID(m.ID) {
			t.Fatalf("invalid id %q accepted", m.ID)
		}
		if err == nil && !m.HasMethod && (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("a response accepted with result %q and error %q", m.Result, m.Error)
		}
	})
}

func TestAppendCompact(t *testing.T) {
	for _, v := range []string{
		`{"a":1}`,
		"{ \"a\" : [ 1 , 2.50 ] ,\n\t\"s\": \"x y\\\" z\\\\\" , \"e\":\"\\\\\" }",
		`"just a string with \" and spaces"`,
		` [ ] `,
		`{"k":"caf\u00e9 <&>","n":1E+400}`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if got := appendCompact([]byte("x"), json.RawMessage(v)); string(got) != "x"+want.String() {
			t.Errorf("AppendCompact(%q) = %q, want %q", v, got, "x"+want.String())
		}
		checkResultParts(t, []byte(v))
	}
}

// checkResultParts: ResultParts, joined, is AppendResult, and its parts
// are slices of the result (not copies).
func checkResultParts(t *testing.T, v []byte) {
	t.Helper()
	id := json.RawMessage(`7`)
	want := AppendResult(nil, id, v)
	parts, ok := ResultParts(id, v, 1000)
	if !ok {
		t.Fatalf("ResultParts(%q) refused", v)
	}
	if got := bytes.Join(parts, nil); !bytes.Equal(got, want) {
		t.Fatalf("ResultParts(%q) = %q, want %q", v, got, want)
	}
	for _, p := range parts[1 : len(parts)-1] {
		// A slice of v starts cap(v)-cap(p) bytes into it.
		if off := cap(v) - cap(p); off < 0 || off >= len(v) || &v[off] != &p[0] {
			t.Fatalf("part %q of %q is a copy", p, v)
		}
	}
	if _, ok := ResultParts(id, v, len(parts)-3); ok {
		t.Errorf("ResultParts(%q) took %d parts over a limit of %d", v, len(parts), len(parts)-3)
	}
}

func FuzzAppendCompact(f *testing.F) {
	f.Add([]byte("{ \"a\" : \"b \\\" c\" }"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want bytes.Buffer
		_ = json.Compact(&want, b)
		if got := appendCompact(nil, b); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("AppendCompact(%q) = %q, want %q", b, got, want.Bytes())
		}
		if len(want.Bytes()) > 0 {
			checkResultParts(t, b)
		}
	})
}

func TestSetMember(t *testing.T) {
	obj := json.RawMessage(`{"z":1,"name":"a","x":{"name":"in"},"name":"dup","a\u0041":[1, 2]}`)
	for _, c := range []struct {
		name  string
		value json.RawMessage
		want  string
	}{
		{"name", json.RawMessage(`"b"`), `{"z":1,"name":"b","x":{"name":"in"},"aA":[1, 2]}`},
		{"name", nil, `{"z":1,"x":{"name":"in"},"aA":[1, 2]}`},
		{"new", json.RawMessage(`true`), `{"z":1,"name":"a","x":{"name":"in"},"name":"dup","aA":[1, 2],"new":true}`},
	} {
		got, err := SetMember(obj, c.name, c.value)
		if err != nil || string(got) != c.want {
			t.Errorf("SetMember(%s, %s) = %s, %v; want %s", c.name, c.value, got, err, c.want)
		}
	}
	if got, err := SetMember(json.RawMessage(`{}`), "a", json.RawMessage(`1`)); err != nil || string(got) != `{"a":1}` {
		t.Errorf("SetMember of {} = %s, %v", got, err)
	}
	if _, err := SetMember(json.RawMessage(`[]`), "a", json.RawMessage(`1`)); err == nil {
		t.Error("SetMember of an array succeeded")
	}
}

// AppendString writes what encoding/json's Encoder without HTML escaping
// writes, on its fast path for plain ASCII and off it.
func TestAppendStringAsEncoder(t *testing.T) {
	for _, s := range []string{"", "echo", "tb0.echo", "a b~\x7f", `q"uote`, `back\slash`, "tab\there", "<b>&amp;</b>", "café", "\u2028\u2029", "bad\xffutf8", "\x00\x1f"} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if got := AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	}
}

// Marshal writes what an Encoder without HTML escaping writes, without
// its newline, and fails where json.Marshal does.
func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"b": "<b>&</b>", "a": []int{1}})
	if err != nil || string(got) != `{"a":[1],"b":"<b>&</b>"}` {
		t.Errorf("Marshal = %s, %v", got, err)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("Marshal(func) did not fail")
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 5, "…", "short"},
		{"longer", 4, "", "long"},
		{"longer", 4, "...", "long..."},
		{"caf\u00e9!", 4, "…", "caf…"}, // é is 2 bytes: not cut in half
		{"\u20ac", 2, "", ""},
	} {
		if got := Truncate(c.s, c.n, c.mark); got != c.want {
			t.Errorf("Truncate(%q, %d, %q) = %q, want %q", c.s, c.n, c.mark, got, c.want)
		}
	}
}

// The method and member names every tools/call carries are read without
// an allocation; other strings are read as they are.
func TestCommonNamesReadWithoutAllocating(t *testing.T) {
	params := json.RawMessage(`{"name":"echo","arguments":{},"_meta":{"progressToken":1}}`)
	method := json.RawMessage(`"tools/call"`)
	var names []string
	if n := testing.AllocsPerRun(100, func() {
		names = names[:0]
		if m, ok := Unquote(method); !ok || m != "tools/call" {
			t.Fatalf("Unquote = %q, %v", m, ok)
		}
		_ = EachMember(params, func(name string, _ json.RawMessage) { names = append(names, name) })
	}); n != 0 {
		t.Errorf("reading a tools/call's method and member names took %v allocations, want 0", n)
	}
	if !slices.Equal(names, []string{"name", "arguments", "_meta"}) {
		t.Errorf("members = %q", names)
	}
	for _, s := range []string{"tools/cal", "tools/calls", "other", ""} {
		if got, ok := Unquote(json.RawMessage(`"` + s + `"`)); !ok || got != s {
			t.Errorf("Unquote(%q) = %q, %v", s, got, ok)
		}
	}
}

// decodeSlow is Decode as it was before it read the envelope while it
// validated: JSON validated whole (Valid), then the envelope walked
// (memberIter). FuzzDecode holds Decode to it.
func decodeSlow(body []byte) (Message, error) {
	var m Message
	if !utf8.Valid(body) {
		return m, &DecodeError{Parse: true, Reason: "invalid UTF-8"}
	}
	if !Valid(body) {
		return m, &DecodeError{Parse: true, Reason: "invalid JSON"}
	}
	b := trimSpace(body)
	switch b[0] {
	case '{':
	case '[':
		return m, &DecodeError{Reason: "batches are not supported"}
	default:
		return m, &DecodeError{Reason: "not a JSON object"}
	}
	var e envelope
	for it := (memberIter{b: b}); it.next(); {
		e.member(it.key, it.value)
		if it.err != nil {
			return Message{}, &DecodeError{Reason: it.err.Error()}
		}
	}
	return e.check()
}

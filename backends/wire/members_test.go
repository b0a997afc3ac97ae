package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestAmbiguous(t *testing.T) {
	params := &Known{Names: []string{"name", "arguments", "_meta"},
		Members: map[string]*Known{"_meta": {Names: []string{"progressToken"}}}}
	envelope := &Known{Names: []string{"jsonrpc", "id", "method", "params"}, Shallow: true,
		Members: map[string]*Known{"params": params}}
	many := `{` + strings.Repeat(`"a":1,`, 0)
	for i := range 40 {
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`
	}
	tests := []struct {
		in   string
		want string // "" for none
	}{
		{`{"name":"a","arguments":{"x":1,"y":[{"z":1}]}}`, ""},
		{`{"name":"a","Name":"b"}`, `member "Name" differs from "name" only in case`},
		{`{"name":"a","name":"b"}`, `member "name" is given more than once`},
		{`{"n\u0061me":"a","name":"b"}`, `member "name" is given more than once`},
		{`{"Name":"b"}`, `member "Name" differs from "name" only in case`},
		{`{"NAME":"b","foo":1}`, `member "NAME" differs from "name" only in case`},
		{`{"_meta":{"progreſsToken":1}}`, `member "progreſsToken" in _meta differs from "progressToken" only in case`},
		{`{"_meta":{"Foo":1,"foo":2}}`, `member "foo" in _meta differs from "Foo" only in case`},
		{`{"arguments":{"path":"a","Path":"b"}}`, `member "Path" in arguments differs from "path" only in case`},
		{`{"arguments":{"l":[1,{"a":1,"A":2}]}}`, `member "A" in arguments.l[1] differs from "a" only in case`},
		{`{"arguments":{"Name":"x","Arguments":{}}}`, ""}, // no known names inside arguments
		{many + `"kz":1,"KA":2}`, ""},
		{many + `"kz":1,"KAA":2}`, `member "KAA" differs from "kaa" only in case`},
		{many + `"kz":1,"KAA":2,"name":1}`, `member "KAA" differs from "kaa" only in case`},
		{`{"\u212Aa":1,"ka":2}`, "member \"ka\" differs from \"\u212Aa\" only in case"},
		{`[{"a":1},{"b":1,"B":1}]`, `member "B" in [1] differs from "b" only in case`},
		{`"x"`, ""},
		{`{"` + strings.Repeat("é", 100) + `":1,"` + strings.Repeat("É", 100) + `":2}`, `member "` + strings.Repeat("É", 40) + `…" differs from "` + strings.Repeat("é", 40) + `…" only in case`},
	}
	for _, tt := range tests {
		got := ""
		if a := Ambiguous(json.RawMessage(tt.in), params); a != nil {
			got = a.Error()
		}
		if !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("Ambiguous(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A shallow envelope: its result may hold anything; params are read.
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1,"A":2}}`:                    "",
		`{"jsonrpc":"2.0","id":1,"ID":2,"result":{}}`:                        `member "ID" differs from "id" only in case`,
		`{"jsonrpc":"2.0","id":1,"Method":"x","method":"y"}`:                 `member "Method" differs from "method" only in case`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"b":1,"B":2}}}`: `member "B" in params.a differs from "b" only in case`,
	} {
		got := ""
		if a := Ambiguous(json.RawMessage(in), envelope); a != nil {
			got = a.Error()
		}
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("Ambiguous(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestFoldMatchesEqualFold(t *testing.T) {
	names := []string{"k", "K", "\u212A", "s", "S", "ſ", "ß", "ẞ", "ǅ", "ǆ", "Ǆ", "Σ", "σ", "ς", "name", "NAME", "nAmE", "é", "É", "İ", "i", "ı", "I"}
	for _, a := range names {
		for _, b := range names {
			if (fold([]byte(a)) == fold([]byte(b))) != strings.EqualFold(a, b) {
				t.Errorf("fold(%q) == fold(%q) is %v, EqualFold is %v", a, b, fold([]byte(a)) == fold([]byte(b)), strings.EqualFold(a, b))
			}
		}
	}
}

// TestAmbiguousLinear: the check reads a message once, whatever its depth.
// It walked each value to its end and then again into it, so nested
// objects cost their length times their depth: a 4 MiB request of them
// held a core for 26 s (this one, of 240 KB, took 3,000
// times wire.Valid's time). The bound is a ratio to Valid on the same
// bytes, the least of a few runs each, so that a busy machine slows both.
func TestAmbiguousLinear(t *testing.T) {
	nest := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{`)
	for i := range 8 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"k` + strconv.Itoa(i) + `":` + nest)
	}
	sb.WriteString(`}}}`)
	msg := []byte(sb.String())
	if !Valid(msg) {
		t.Fatal("the message is not valid JSON")
	}
	// testing.Benchmark runs each until it has taken long enough to
	// measure, on any clock (Wine's is too coarse to time one run).
	per := func(f func()) int64 {
		return testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				f()
			}
		}).NsPerOp()
	}
	if a := Ambiguous(msg, nil); a != nil {
		t.Fatal(a)
	}
	valid := per(func() { Valid(msg) })
	ambiguous := per(func() { Ambiguous(msg, nil) })
	if ambiguous > 200*valid {
		t.Errorf("Ambiguous took %d ns on %d bytes nested 5,000 deep, Valid %d ns: more than 200 times", ambiguous, len(msg), valid)
	}
}

// BenchmarkAmbiguous: the check every client request gets (readMsg), on a
// typical tools/call and on one with a 1 MiB text argument.
func BenchmarkAmbiguous(b *testing.B) {
	known := &Known{Names: []string{"jsonrpc", "id", "method", "params"},
		Members: map[string]*Known{"params": {Names: []string{"name", "arguments", "_meta"}}}}
	small := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fs.read_file","arguments":{"path":"/tmp/x","limit":100},"_meta":{"progressToken":7}}}`)
	large := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fs.write_file","arguments":{"path":"/tmp/x","content":"` + strings.Repeat("abcdefgh", 1<<17) + `"}}}`)
	for _, c := range []struct {
		name string
		msg  []byte
	}{{"call", small}, {"1MiB", large}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.msg)))
			b.ReportAllocs()
			for b.Loop() {
				if Ambiguous(c.msg, known) != nil {
					b.Fatal("ambiguous")
				}
			}
		})
	}
}

// TestAmbiguousAllocatesNothing: a request of 2026-07-28, whose _meta
// members are known names longer than 32 bytes, is checked without
// allocating (each member name was converted to a string to look it up
// among the known ones: three allocations per request).
func TestAmbiguousAllocatesNothing(t *testing.T) {
	known := &Known{Names: []string{"jsonrpc", "id", "method", "params"},
		Members: map[string]*Known{"params": {Names: []string{"name", "arguments", "_meta"},
			Members: map[string]*Known{"_meta": {Names: []string{"progressToken",
				"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo"}}}}}}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},` +
		`"name":"tb.echo","arguments":{"text":"hello","n":12345678901234567890123}}}`)
	if n := testing.AllocsPerRun(100, func() {
		if a := Ambiguous(msg, known); a != nil {
			t.Fatal(a)
		}
	}); n != 0 {
		t.Errorf("Ambiguous allocated %v times per request", n)
	}
}

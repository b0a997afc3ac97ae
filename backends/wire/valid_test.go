package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	`{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a" : [1, 2.5e-3, -0, true, false, null, "x"]}`,
	`"\u00e9\n\"\\\/\b\f\r\t"`, `0`, `-0.0e+1`, `1E9`, "\t\n\r 1 \t\n\r",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`[[[[{"a":[{}]}]]]]`, `"caf` + "\xff\xfe" + `"`,
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{a:1}`, `{'a':1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`, `1 2`, `{}{}`, `tru`, `truex`,
	`nul`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", `"\`, `[1 2]`, `{"a":1 "b":2}`,
	`{"a" 1}`, `NaN`, `Infinity`, `[-]`, `{"a":[}]}`, "\x00", `"\u0000"`,
}

// Valid agrees with encoding/json's Valid.
func TestValid(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := append(validCases, deep(10000), deep(10001), deep(100), `{"a":`+deep(9999)+`}`, `{"a":`+deep(10000)+`}`)
	// Each special byte at each place of strings long enough for the
	// eight-at-a-time scan.
	for n := 7; n <= 45; n++ {
		for at := range n {
			for _, special := range []string{`"`, `\`, `\n`, `\u00e9`, "\x01", "\x1f", "\x7f", "\xff", ` `, `\x`} {
				str := []byte(strings.Repeat("a", n))
				cases = append(cases, `["`+string(str[:at])+special+string(str[at:])+`"]`)
			}
		}
	}
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// BenchmarkValid compares Valid with encoding/json's on a call's response
// and on a response with a 112 KiB text.
func BenchmarkValid(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"{\"n\":12345678901234567890123,\"s\":\"hello, world: a line of text\"}"}],"isError":false}}`)
	large := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum dolor sit amet, ", 4096) + `"}]}}`)
	for _, in := range []struct {
		name string
		b    []byte
	}{{"call", msg}, {"large", large}} {
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{{"wire", Valid}, {"encoding-json", json.Valid}} {
			b.Run(in.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.b)))
				for b.Loop() {
					v.valid(in.b)
				}
			})
		}
	}
}

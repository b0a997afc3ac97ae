package stdio

import (
	"github.com/mcp-gateway/mcp-gateway/backends/wire"

	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// FuzzFramer feeds the framer arbitrary bytes in arbitrary splits: it
// must not panic or hang, must consume input on every frame, and must keep
// every message under the limit. Then, from the same inputs, it builds a
// random sequence of valid messages in random framings, splits it at random
// points and checks that exactly those messages come out, in order.
func FuzzFramer(f *testing.F) {
	for _, tc := range stdioFramerCases {
		f.Add([]byte(tc.in), []byte{})
		f.Add([]byte(tc.in), []byte{1})
		f.Add([]byte(tc.in), []byte{3, 7, 2})
	}
	f.Fuzz(func(t *testing.T, data, splits []byte) {
		const max = 64
		sizes := make([]int, len(splits))
		for i, b := range splits {
			sizes[i] = int(b)
		}

		// Arbitrary input.
		fr := NewFramer(&chunkReader{data: data, sizes: sizes}, max, 16)
		consumed := 0
		for frames := 0; ; frames++ {
			if frames > len(data) {
				t.Fatalf("more frames (%d) than input bytes (%d)", frames, len(data))
			}
			x, err := fr.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("next: %v", err)
				}
				break
			}
			if len(x.Body) > max {
				t.Fatalf("body of %d bytes over the %d-byte limit", len(x.Body), max)
			}
			if x.Size <= 0 && x.Bad == "" {
				t.Fatalf("message frame of %d bytes", x.Size)
			}
			consumed += x.Size + x.Skipped
			if x.Body != nil {
				_, _ = wire.Decode(x.Body) // must not panic
			}
		}
		if consumed > len(data) {
			t.Fatalf("frames cover %d bytes of %d", consumed, len(data))
		}

		// Valid messages, random framings, random splits.
		h := fnv.New64a()
		h.Write(data)
		h.Write(splits)
		rng := rand.New(rand.NewPCG(h.Sum64(), uint64(len(data))))
		stream, want := randomStream(rng)
		got := frames(t, &chunkReader{data: stream, sizes: sizes}, 1<<10, 16)
		if !slices.Equal(got, want) {
			t.Fatalf("stream %q:\n got  %q\n want %q", stream, got, want)
		}
	})
}

// randomStream returns a stream of 0 to 8 valid messages in random
// framings, and the frames frames should report for it.
func randomStream(rng *rand.Rand) ([]byte, []string) {
	var (
		buf  bytes.Buffer
		want []string
	)
	if rng.IntN(4) == 0 {
		buf.Write(bom)
	}
	for i := range rng.IntN(9) {
		body := randomBody(rng, i)
		for range rng.IntN(3) { // blank lines between messages
			buf.WriteString([]string{"\n", "\r\n", " \t\n"}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			compact := new(bytes.Buffer)
			json.Compact(compact, body)
			pad := []string{"", " ", "\t "}[rng.IntN(3)]
			buf.WriteString(pad)
			buf.Write(compact.Bytes())
			buf.WriteString(pad)
			buf.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
			want = append(want, "L "+compact.String())
			continue
		}
		eol := []string{"\r\n", "\n"}[rng.IntN(2)]
		name := []string{"Content-Length", "content-length", "CONTENT-length"}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			buf.WriteString("Content-Type: application/vscode-jsonrpc; charset=utf-8" + eol)
		}
		fmt.Fprintf(&buf, "%s:%s%d%s", name, []string{" ", "", "  "}[rng.IntN(3)], len(body), eol)
		if rng.IntN(3) == 0 {
			buf.WriteString("X-Extra: " + fmt.Sprint(rng.Uint32()) + eol)
		}
		buf.WriteString(eol)
		buf.Write(body)
		if rng.IntN(3) == 0 {
			buf.WriteString(eol)
		}
		want = append(want, "F "+string(body))
	}
	return buf.Bytes(), want
}

// randomBody returns a JSON-RPC request, possibly pretty-printed, with
// a random string (ASCII, multibyte, escapes) in it.
func randomBody(rng *rand.Rand, id int) []byte {
	alphabet := []rune("aZ09 :{}[]\",\\\n\r\tーの意味é😀")
	var s strings.Builder
	for range rng.IntN(40) {
		s.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	msg := map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"method":  "tools/call",
		"params":  map[string]any{"name": "answer", "arguments": map[string]any{"query": s.String()}},
	}
	var body []byte
	if rng.IntN(3) == 0 {
		body, _ = json.MarshalIndent(msg, "", "  ")
	} else {
		body, _ = json.Marshal(msg)
	}
	return body
}

// The property half of the fuzz target, run over many seeds on every test
// run, with splits at random points.
func TestFramerRandomStreams(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		stream, want := randomStream(rng)
		sizes := make([]int, 1+rng.IntN(5))
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(40)
		}
		got := frames(t, &chunkReader{data: stream, sizes: sizes}, 1<<10, 16)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d, stream %q:\n got  %q\n want %q", seed, stream, got, want)
		}
	}
}

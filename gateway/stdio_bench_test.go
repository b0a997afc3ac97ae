package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkStdioRead measures the read path (framing, JSON-RPC decoding,
// hand-off to Read) for typical small requests.
func BenchmarkStdioRead(b *testing.B) {
	const n = 1000
	for _, framed := range []bool{true, false} {
		var stream bytes.Buffer
		for i := range n {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"answer","arguments":{"query":"%s"}}}`,
				i, strings.Repeat("q", 100))
			if framed {
				stream.WriteString(stdioFramed(msg))
			} else {
				stream.WriteString(msg + "\n")
			}
		}
		data := stream.Bytes()
		b.Run(map[bool]string{true: "framed", false: "line"}[framed], func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				conn, _ := NewStdioTransport(bytes.NewReader(data), io.Discard, StdioOptions{}).Connect(ctx)
				for got := 0; ; got++ {
					if _, err := conn.Read(ctx); err != nil {
						if got != n {
							b.Fatalf("read %d messages, want %d (%v)", got, n, err)
						}
						break
					}
				}
				conn.Close()
			}
		})
	}
}

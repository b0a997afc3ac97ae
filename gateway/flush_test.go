package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
)

// flushCounter is a client stream that counts the flushes asked of it
// (Send of no parts, not a response).
type flushCounter struct {
	clientStream
	flushes atomic.Int32
}

func (f *flushCounter) Send(m outMsg) error {
	if m.empty() && !m.final {
		f.flushes.Add(1)
	}
	return f.clientStream.Send(m)
}

// serveStdioClient serves a stdio client of gw over pipes, on the stream
// wrap makes of its connection, until the test ends, and returns the client
// once it is initialized: from then on its stream is the gateway's.
func serveStdioClient(t testing.TB, ctx context.Context, gw *Gateway, wrap func(*stdio.Conn) clientStream) *testutil.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	cs := wrap(stdio.New(inR, outW, stdio.Options{}))
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gw.serve(ctx, cs)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-served
	})
	c := testutil.NewClient(t, inW, outR, testutil.ClientOptions{})
	c.Send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.Next()
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// A burst of backend responses flushes the client streams that hold
// something and no other: while one stdio client's calls are answered
// (each response held, then flushed when the backend's read loop is
// idle), a second client that is served but asks nothing is never
// flushed. Before, every burst flushed every client's stream.
func TestReadIdleFlushesOnlyStreamsThatHold(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("tb"))
	busy := serveRaw(t, ctx, gw)

	idle := &flushCounter{}
	serveStdioClient(t, ctx, gw, func(c *stdio.Conn) clientStream {
		idle.clientStream = newStdioStream(c, gw.readIdle(), gw.log)
		return idle
	})
	idle.flushes.Store(0)

	for i := range 20 {
		busy.Send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"tb.echo","arguments":{"i":` + strconv.Itoa(i) + `}}}`)
		if r := busy.Next(); r.ID() != strconv.Itoa(i) || !bytes.Contains(r.Member("result"), []byte(`"i"`)) {
			t.Fatalf("call %d: %s", i, r)
		}
	}
	if n := idle.flushes.Load(); n != 0 {
		t.Errorf("a client that asked nothing was flushed %d times while another's 20 calls were answered, want 0", n)
	}
}

// BenchmarkReadIdleFlush is the flush a backend's read loop does each time
// it has handled all it read, with 1 or 100 stdio clients served that hold
// nothing: it flushed every client's stream before, and now only those
// marked as holding something.
func BenchmarkReadIdleFlush(b *testing.B) {
	for _, idle := range []int{1, 100} {
		b.Run(fmt.Sprintf("clients%d", idle), func(b *testing.B) {
			gw, ctx := newGateway(b, nil)
			for range idle {
				serveStdioClient(b, ctx, gw, func(c *stdio.Conn) clientStream { return newStdioStream(c, gw.readIdle(), gw.log) })
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				gw.opts.Backends.ReadIdle().Flush()
			}
		})
	}
}

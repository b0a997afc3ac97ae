package gateway

import (
	"bytes"
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
	if len(m.parts) == 0 && !m.final {
		f.flushes.Add(1)
	}
	return f.clientStream.Send(m)
}

// A burst of backend responses flushes the client streams that hold
// something and no other: while one stdio client's calls are answered
// (each response held, then flushed when the backend's read loop is
// idle), a second client that is served but asks nothing is never
// flushed. Before, every burst flushed every client's stream.
func TestReadIdleFlushesOnlyStreamsThatHold(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("tb"))
	busy := serveRaw(t, ctx, gw)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	idle := &flushCounter{clientStream: newStdioStream(stdio.New(inR, outW, stdio.Options{}), gw.readIdle(), gw.log)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gw.serve(ctx, idle)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-served
	})
	c := testutil.NewClient(t, inW, outR, testutil.ClientOptions{})
	c.Send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
	c.Next() // served: its stream is the gateway's from here on
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

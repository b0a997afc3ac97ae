package gateway

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// recStream is a clientStream that records what is written and signals
// each write.
type recStream struct {
	mu    sync.Mutex
	msgs  [][]byte
	wrote chan []byte
}

func (r *recStream) Read(func()) (inMsg, error) { select {} }
func (r *recStream) Gone() bool                 { return false }
func (r *recStream) Close() error               { return nil }
func (r *recStream) Send(m outMsg) error {
	if m.empty() {
		return nil
	}
	msg := m.message()
	r.mu.Lock()
	r.msgs = append(r.msgs, bytes.Clone(msg))
	r.mu.Unlock()
	r.wrote <- bytes.Clone(msg)
	return nil
}

func testSession(t *testing.T) (*session, *recStream) {
	rs := &recStream{wrote: make(chan []byte, 8)}
	g := New(Options{})
	s := newSession(g.newFront(frontOptions{}), rs)
	t.Cleanup(s.close)
	return s, rs
}

// A backend's request goes out byte for byte and the client's answer,
// result or error, comes back byte for byte; a cancelled one is cancelled
// at the client.
func TestSessionRequestPassesThrough(t *testing.T) {
	s, rs := testSession(t)
	params := `{"requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string","default":"x"}}},"message":"m","x-unknown":1}`
	type out struct {
		res []byte
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := s.request(context.Background(), nil, "elicitation/create", []byte(params))
		done <- out{res, err}
	}()
	msg := <-rs.wrote
	m, err := wire.Decode(msg)
	if err != nil || m.Method != "elicitation/create" || string(m.Params) != params || string(m.ID) != `"gw-1"` {
		t.Fatalf("sent %s", msg)
	}
	answer := `{"action":"accept","content":{"name":"Ada"},"_meta":{"k":[1,2]}}`
	in := readMsg([]byte(`{"jsonrpc":"2.0","id":"gw-1","result":` + answer + `}`))
	s.handle(&in)
	if o := <-done; o.err != nil || string(o.res) != answer {
		t.Errorf("answer: %s, %v", o.res, o.err)
	}

	go func() {
		res, err := s.request(context.Background(), nil, "sampling/createMessage", []byte(`{}`))
		done <- out{res, err}
	}()
	<-rs.wrote
	in = readMsg([]byte(`{"jsonrpc":"2.0","id":"gw-2","error":{"code":-1,"message":"user rejected sampling"}}`))
	s.handle(&in)
	var je *jsonrpc.Error
	if o := <-done; !errors.As(o.err, &je) || je.Code != -1 || je.Message != "user rejected sampling" {
		t.Errorf("error answer: %v", o.err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		res, err := s.request(ctx, nil, "roots/list", nil)
		done <- out{res, err}
	}()
	if msg := <-rs.wrote; string(msg) != `{"jsonrpc":"2.0","id":"gw-3","method":"roots/list"}` {
		t.Errorf("roots/list sent as %s", msg)
	}
	cancel()
	if o := <-done; !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancelled request: %v", o.err)
	}
	if msg := <-rs.wrote; !bytes.Contains(msg, []byte(`"method":"notifications/cancelled","params":{"reason":"cancelled by the server","requestId":"gw-3"}`)) {
		t.Errorf("cancellation sent as %s", msg)
	}
	// A late answer to it is dropped (go-sdk, which is not running here,
	// would block the reader).
	in = readMsg([]byte(`{"jsonrpc":"2.0","id":"gw-3","result":{"roots":[]}}`))
	s.handle(&in)
}

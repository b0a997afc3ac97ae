package gateway

import (
	"encoding/json"
	"testing"
)

// nopStream is a clientStream that takes every message and does nothing.
type nopStream struct{}

func (nopStream) Read(func()) (inMsg, error) { select {} }
func (nopStream) Send(outMsg) error          { return nil }
func (nopStream) Gone() bool                 { return false }
func (nopStream) Close() error               { return nil }

// TestSendAllocs: handing a message of one part (a response, a progress
// notification) to the stream costs no allocation: it is sent on every
// call.
func TestSendAllocs(t *testing.T) {
	g := goneStream{clientStream: nopStream{}, onFail: func(error) {}}
	id, msg := json.RawMessage(`7`), []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	if n := testing.AllocsPerRun(100, func() { _ = g.send(id, msg, true, true) }); n != 0 {
		t.Errorf("send: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = g.sendLatest(id, "k", msg) }); n != 0 {
		t.Errorf("sendLatest: %v allocations, want 0", n)
	}
}

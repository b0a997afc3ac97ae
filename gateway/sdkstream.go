package gateway

import (
	"context"
	"io"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkStream is a go-sdk connection as a client stream (Gateway.Serve): its
// messages are encoded for the session and decoded back. With a queue (the
// 2024-11-05 SSE transport), what the session writes is queued and written
// by pump, so that a client that does not read holds up nobody else.
type sdkStream struct {
	ctx  context.Context
	conn mcp.Connection
	q    *streamhttp.Queue // nil: Send writes to conn
	full func(error)       // called when q is over its budget
}

func (s *sdkStream) Read(wait func()) (inMsg, error) {
	if wait != nil {
		wait()
	}
	msg, err := s.conn.Read(s.ctx)
	if err != nil {
		if s.ctx.Err() != nil {
			err = io.EOF // the session was ended on purpose (an HTTP session's end, shutdown)
		}
		return inMsg{}, err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return unreadable("invalid message: " + err.Error()), nil
	}
	return readMsg(data), nil
}

// Send writes the message (joined: go-sdk's connection takes decoded
// messages), or with a queue, queues it, coalesced per key.
func (s *sdkStream) Send(m outMsg) error {
	if m.empty() {
		return nil
	}
	return s.put(m.key, m.message())
}

// Gone is false: a go-sdk connection cannot tell.
func (s *sdkStream) Gone() bool { return false }

// put writes data, or with a queue, queues it (key as for streamhttp.Queue.Put).
func (s *sdkStream) put(key string, data []byte) error {
	if s.q == nil {
		return s.write(data)
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if err := s.q.Put(key, data); err != nil {
		s.full(err)
	}
	return nil
}

func (s *sdkStream) write(data []byte) error {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return err
	}
	return s.conn.Write(s.ctx, msg)
}

// pump writes what the queue holds until done is closed or a write fails,
// which it returns. cut fails a write in progress once the session ends.
func (s *sdkStream) pump(done <-chan struct{}, cut *streamhttp.Cutter) error {
	for {
		select {
		case <-s.q.Wake():
		case <-done:
			return nil
		}
		batch := s.q.Take()
		var err error
		if len(batch) > 0 {
			err = cut.Do(func() error {
				for _, m := range batch {
					if err := s.write(m); err != nil {
						return err
					}
				}
				return nil
			})
		}
		s.q.Written()
		if err != nil {
			return err
		}
	}
}

func (s *sdkStream) Close() error { return s.conn.Close() }

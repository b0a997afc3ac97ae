package gateway

import (
	"context"
	"io"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkConn is the session as go-sdk's connection: it reads what the session
// delivers and writes go-sdk's messages under the client's ids.
type sdkConn struct{ s *session }

// sdkTransport connects go-sdk to a session.
type sdkTransport struct{ s *session }

func (t sdkTransport) Connect(context.Context) (mcp.Connection, error) { return sdkConn(t), nil }

func (c sdkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.s.toSDK:
		return msg, nil
	case <-c.s.inputOK:
		return nil, c.s.readErr
	case <-c.s.closed:
		return nil, io.EOF
	case <-c.s.gone.ch:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c sdkConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	s := c.s
	if resp, ok := msg.(*jsonrpc.Response); ok {
		n, _ := resp.ID.Raw().(int64)
		s.mu.Lock()
		call := s.sdk[n]
		s.mu.Unlock()
		if call == nil {
			s.log.Debug("go-sdk answered an unknown id", "id", resp.ID.Raw())
			return nil
		}
		defer s.written()
		if call.answered != nil {
			defer close(call.answered)
		}
		if !s.finish(call) {
			return s.s.send(call.id, nil, true, false)
		}
		var data []byte
		if resp.Error != nil {
			data = appendError(nil, call.id, wireError(resp.Error))
		} else {
			result := dropNewerFields(resp.Result)
			if call.initialize {
				result = s.f.g.initializeResult(result)
			}
			data = wire.AppendResult(nil, call.id, result)
		}
		return s.s.send(call.id, data, true, false)
	}
	if s.isClosed() {
		return mcp.ErrConnectionClosed
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return s.s.Write(data)
}

func (c sdkConn) Close() error {
	c.s.close()
	return nil
}

func (c sdkConn) SessionID() string { return "" }

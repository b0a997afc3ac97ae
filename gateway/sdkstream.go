package gateway

import (
	"bytes"
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkStream is a go-sdk connection as a client stream (Gateway.Serve): its
// messages are encoded for the session and decoded back.
type sdkStream struct {
	ctx  context.Context
	conn mcp.Connection
}

func (s *sdkStream) Read() ([]byte, string, error) {
	msg, err := s.conn.Read(s.ctx)
	if err != nil {
		if s.ctx.Err() != nil {
			err = io.EOF // the session was ended on purpose (an HTTP session's end, shutdown)
		}
		return nil, "", err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, "invalid message: " + err.Error(), nil
	}
	return data, "", nil
}

func (s *sdkStream) Write(data []byte) error {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return err
	}
	return s.conn.Write(s.ctx, msg)
}

// WriteParts joins the parts: go-sdk's connection takes decoded messages.
func (s *sdkStream) WriteParts(parts ...[]byte) error { return s.Write(bytes.Join(parts, nil)) }

func (s *sdkStream) Buffer(data []byte) error { return s.Write(data) }

func (s *sdkStream) Flush() error { return nil }

// BufferLatest writes at once: go-sdk's transport decides how a slow client
// holds up its writer.
func (s *sdkStream) BufferLatest(_ string, data []byte) error { return s.Write(data) }

func (s *sdkStream) More() bool { return false }

func (s *sdkStream) Close() error { return s.conn.Close() }

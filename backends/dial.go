package backends

import (
	"context"
	"io"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// DialFunc connects to a server's peer in the gateway's own process
// (Options.Dial), where its child's pipes or its remote transport would
// be: a different pipe, not a different backend, so the handshake, the
// forwarding, the timeouts and the supervision are the code every
// backend runs.
//
// The conn writes whole lines (one JSON-RPC message each) to the returned
// ReadWriteCloser and reads the peer's lines from it. A Write must not wait
// for the peer to read (it queues, as a remote transport's does). The end
// of its input (Read returning an error) is the end of the session: a
// crash, unless the backend is being stopped. Close ends the session from
// the gateway's side; the peer sees the end of its input. A DialFunc that
// fails is a start that failed, with its error as the reason.
type DialFunc func(ctx context.Context, server config.Server) (io.ReadWriteCloser, error)

// startDialed starts a session with Options.Dial; on failure it returns the
// reason.
func (b *backend) startDialed(ctx context.Context) (*session, string) {
	rwc, err := b.m.opts.Dial(ctx, b.cfg)
	if err != nil {
		return nil, err.Error()
	}
	return b.startPeer(peer{
		w:        rwc,
		r:        rwc,
		failure:  func() string { return "" },
		shutdown: func() { rwc.Close() },
		attrs:    []any{"dialed", true},
	}), ""
}

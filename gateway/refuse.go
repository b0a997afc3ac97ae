package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// RefuseStdio serves a client on r and w that must not be served: every
// request is answered with e (ids exact, as always), bad input as usual,
// until initialize has been answered, the input ends, or ctx is done. It
// does not close r or w.
func RefuseStdio(ctx context.Context, r io.Reader, w io.Writer, e *jsonrpc.Error, log *slog.Logger) error {
	c := stdio.New(r, w, stdio.Options{Logger: log})
	defer c.Close()
	for ctx.Err() == nil {
		body, bad, err := c.Read(nil)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var reply []byte
		m, derr := wire.Decode(body)
		var de *wire.DecodeError
		switch {
		case bad != "":
			reply = appendError(nil, nil, errParse(bad))
		case errors.As(derr, &de) && de.Parse:
			reply = appendError(nil, de.ID, errParse(de.Reason))
		case derr != nil && de != nil:
			reply = appendError(nil, de.ID, errInvalidRequest(de.Reason))
		case m.IsCall():
			reply = appendError(nil, m.ID, e)
		}
		if reply != nil {
			if err := c.Write(reply); err != nil {
				return err
			}
		}
		if derr == nil && m.IsCall() && m.Method == "initialize" {
			return nil
		}
	}
	return nil
}

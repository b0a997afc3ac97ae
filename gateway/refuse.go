package gateway

import (
	"context"
	"io"
	"log/slog"

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
		in, err := newStdioStream(c, nil, log).Read(nil)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var reply []byte
		switch {
		case in.bad != nil && in.bad.Parse:
			reply = appendError(nil, in.bad.ID, errParse(in.bad.Reason))
		case in.bad != nil:
			reply = appendError(nil, in.bad.ID, errInvalidRequest(in.bad.Reason))
		case in.IsCall():
			reply = appendError(nil, in.ID, e)
		}
		if reply != nil {
			if err := c.Write(reply); err != nil {
				return err
			}
		}
		if in.IsCall() && in.Method == "initialize" {
			return nil
		}
	}
	return nil
}

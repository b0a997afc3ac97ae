package gateway

import (
	"context"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes is the largest message the stdio transport accepts.
const DefaultMaxMessageBytes = 16 << 20

// StdioOptions configure a StdioTransport.
type StdioOptions struct {
	// LineMode forces line-delimited replies (MCP_LINE_MODE=1); otherwise
	// replies follow the framing of the first message received.
	LineMode bool
	// MaxMessageBytes caps one message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	Logger          *slog.Logger
}

// StdioTransport serves MCP on a byte stream (the gateway's stdin and
// stdout). It accepts both Content-Length framed messages and line-delimited
// JSON, in any mix and any split across reads; a leading UTF-8 BOM is
// skipped. Bad input never ends the stream: invalid JSON is answered with a
// -32700 error (id null), a JSON value that is not a JSON-RPC message with
// -32600, a bad or oversized Content-Length with -32700 and its bytes
// skipped, and the next message is served. Replies are written whole, never
// interleaved. After a notifications/cancelled for a request, no response for
// that request id is written.
type StdioTransport struct {
	r    io.Reader
	w    io.Writer
	opts StdioOptions
}

// NewStdioTransport returns a transport reading r and writing w.
func NewStdioTransport(r io.Reader, w io.Writer, opts StdioOptions) *StdioTransport {
	return &StdioTransport{r: r, w: w, opts: opts}
}

// Connect implements mcp.Transport. It may be called once.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	panic("TODO(stdio helper)")
}

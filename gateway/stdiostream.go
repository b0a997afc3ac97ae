package gateway

import "github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"

// stdioStream is the stdio transport as a client stream (ServeStdio): a
// held message is buffered for the burst's one write, progress keeps only
// the latest per call for a slow reader, and a large result is written
// from its parts, never joined.
type stdioStream struct{ c *stdio.Conn }

func (s stdioStream) Read(wait func()) (inMsg, error) {
	msg, bad, err := s.c.Read(wait)
	switch {
	case err != nil:
		return inMsg{}, err
	case bad != "":
		return unreadable(bad), nil
	}
	return readMsg(msg), nil
}

func (s stdioStream) Send(m outMsg) error {
	switch {
	case len(m.parts) == 0 && m.final:
		return nil // a suppressed response: nothing to write, nothing to flush
	case len(m.parts) == 0:
		return s.c.Flush()
	case m.key != "":
		return s.c.BufferLatest(m.key, m.message())
	case m.hold:
		return s.c.Buffer(m.message())
	}
	return s.c.WriteParts(m.parts...)
}

func (s stdioStream) Gone() bool   { return s.c.WriterGone() }
func (s stdioStream) Close() error { return s.c.Close() }

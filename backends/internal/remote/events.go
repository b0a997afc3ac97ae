package remote

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name  string // "" means "message"
	id    string
	retry string
	data  []byte
}

// errEventTooLarge ends a stream whose event is over wire.MaxMessage bytes.
var errEventTooLarge = errors.New("server-sent event over the size limit")

// sseReader reads the events of a text/event-stream (the WHATWG
// event-stream format: lines end with LF, CRLF or CR; data lines join with
// LF; a blank line dispatches the event; lines starting with ':' are
// comments).
type sseReader struct {
	br  *bufio.Reader
	max int
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 32<<10), max: wire.MaxMessage}
}

// next returns the next event that has data, an id or a retry; it returns
// io.EOF at the end of the stream (a last event without its blank line is
// dropped, as the format says).
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData, any := false, false
	for {
		line, err := s.line()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if any {
				ev.data = data.Bytes()
				if !hasData {
					ev.data = nil
				}
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name, any = string(value), true
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > s.max {
				return sseEvent{}, errEventTooLarge
			}
			data.Write(value)
			hasData, any = true, true
		case "id":
			if !bytes.ContainsRune(value, 0) {
				ev.id, any = string(value), true
			}
		case "retry":
			ev.retry, any = string(value), true
		}
	}
}

// line reads one line without its end (LF, CRLF or CR).
func (s *sseReader) line() ([]byte, error) {
	var out []byte
	for {
		b, err := s.br.ReadByte()
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				return nil, io.ErrUnexpectedEOF // a line without its end: not dispatched
			}
			return nil, err
		}
		switch b {
		case '\n':
			return out, nil
		case '\r':
			if nb, err := s.br.Peek(1); err == nil && nb[0] == '\n' {
				_, _ = s.br.ReadByte()
			}
			return out, nil
		}
		if len(out) > s.max {
			return nil, errEventTooLarge
		}
		out = append(out, b)
	}
}

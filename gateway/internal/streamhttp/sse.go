package streamhttp

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Frame is one event as written on an event stream: "event: NAME" when
// name is not "", "id: ID" when id is not "", then "data: DATA" and the
// blank line that ends the event. data must be one line (a JSON message
// as the gateway writes it is).
func Frame(name, id string, data []byte) []byte {
	buf := make([]byte, 0, len(data)+len(id)+32)
	if name != "" {
		buf = append(append(append(buf, "event: "...), name...), '\n')
	}
	if id != "" {
		buf = append(append(append(buf, "id: "...), id...), '\n')
	}
	return append(append(append(buf, "data: "...), data...), "\n\n"...)
}

// WriteFrames writes frames to w, in order, and flushes them through rc
// (the headers too, when nothing was written yet). It stops at the first
// write that fails, and returns its error.
func WriteFrames(w io.Writer, rc *http.ResponseController, frames [][]byte) error {
	for _, f := range frames {
		if _, err := w.Write(f); err != nil {
			return err
		}
	}
	return rc.Flush()
}

// EventID names the event of a stream at index (0 for its first), as
// "<stream>_<index>": what a client sends back in Last-Event-ID to resume
// the stream after it (ParseEventID). stream must hold no '_'.
func EventID(stream string, index int) string {
	return stream + "_" + strconv.Itoa(index)
}

// ParseEventID splits an id EventID made into its stream and index; ok is
// false for anything else.
func ParseEventID(id string) (stream string, index int, ok bool) {
	stream, n, found := strings.Cut(id, "_")
	if !found || strings.Contains(n, "_") {
		return "", 0, false
	}
	index, err := strconv.Atoi(n)
	if err != nil || index < 0 {
		return "", 0, false
	}
	return stream, index, true
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// readRelay is -relay -read: the relay of a proxy that reads what it
// forwards, and does nothing else. Each line from the client is decoded
// and checked once as the gateway reads a request (wire.Decode, and
// wire.Ambiguous over its params) and sent on under the relay's own id;
// each line from the child is decoded and sent back under the client's id.
// Writes go out once per burst (when the reader has nothing buffered), as
// the gateway batches them. It is BenchmarkToolsCall's floor for any
// gateway that must read each message: what the gateway spends above it
// is its own work (routing, admission, records), not reading JSON.
func readRelay(in io.Reader, out io.Writer, childIn io.WriteCloser, childOut io.Reader) {
	var (
		mu   sync.Mutex
		ids  = map[int64]json.RawMessage{}
		next int64
	)
	known := &wire.Known{Names: []string{"jsonrpc", "id", "method", "params"}, Members: map[string]*wire.Known{
		"params": {Names: []string{"name", "arguments", "_meta"}},
	}}
	go func() {
		defer childIn.Close() // our stdin closed: the child sees EOF
		relayLines(in, childIn, func(buf, line []byte) []byte {
			m, err := wire.Decode(line)
			switch {
			case err != nil || wire.Ambiguous(line, known) != nil:
				return buf // dropped: the benchmark sends none
			case !m.IsCall():
				return append(buf, line...) // a notification: as it is
			}
			mu.Lock()
			next++
			id := next
			ids[id] = bytes.Clone(m.ID)
			mu.Unlock()
			return wire.AppendRequest(buf, strconv.AppendInt(nil, id, 10), m.Method, m.Params)
		})
	}()
	relayLines(childOut, out, func(buf, line []byte) []byte {
		m, err := wire.Decode(line)
		switch {
		case err != nil:
			return buf
		case m.HasMethod:
			return append(buf, line...) // a notification: as it is
		}
		id, _ := strconv.ParseInt(string(m.ID), 10, 64)
		mu.Lock()
		orig := ids[id]
		delete(ids, id)
		mu.Unlock()
		if m.Result == nil {
			buf = append(append(append(buf, `{"jsonrpc":"2.0","id":`...), orig...), `,"error":`...)
			return append(append(buf, m.Error...), '}')
		}
		return wire.AppendResult(buf, orig, m.Result)
	})
}

// relayLines reads lines from r and writes what conv makes of each to w,
// one write per burst of lines read, until r ends.
func relayLines(r io.Reader, w io.Writer, conv func(buf, line []byte) []byte) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 1 {
			n := len(buf)
			if buf = conv(buf, bytes.TrimSuffix(line, []byte{'\n'})); len(buf) > n {
				buf = append(buf, '\n')
			}
		}
		if len(buf) > 0 && (err != nil || br.Buffered() == 0) {
			if _, werr := w.Write(buf); werr != nil {
				return
			}
			buf = buf[:0]
		}
		if err == bufio.ErrBufferFull {
			fmt.Fprintln(os.Stderr, "testbackend: relay -read: a line over 64 KiB")
		}
		if err != nil {
			return
		}
	}
}

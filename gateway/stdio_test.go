package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioOutput is a concurrency-safe io.Writer that records each Write.
type stdioOutput struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	wrote  chan struct{} // signalled after each Write
}

func newStdioOutput() *stdioOutput { return &stdioOutput{wrote: make(chan struct{}, 1)} }

func (o *stdioOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	o.buf.Write(p)
	select {
	case o.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (o *stdioOutput) bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}

// stdioReplies splits out into messages, strictly: framed replies must be
// exactly "Content-Length: N\r\n\r\n" + N bytes, line replies one JSON
// document and "\n" each.
func stdioReplies(t testing.TB, out []byte, framed bool) [][]byte {
	t.Helper()
	var msgs [][]byte
	header := regexp.MustCompile(`^Content-Length: ([0-9]+)\r\n\r\n`)
	for len(out) > 0 {
		var msg []byte
		if framed {
			m := header.FindSubmatch(out)
			if m == nil {
				t.Fatalf("output is not framed at %q", out)
			}
			n, _ := strconv.Atoi(string(m[1]))
			out = out[len(m[0]):]
			if n > len(out) {
				t.Fatalf("Content-Length %d, only %d bytes follow", n, len(out))
			}
			msg, out = out[:n], out[n:]
		} else {
			i := bytes.IndexByte(out, '\n')
			if i < 0 {
				t.Fatalf("unterminated line reply %q", out)
			}
			msg, out = out[:i], out[i+1:]
		}
		if !json.Valid(msg) || bytes.ContainsAny(msg, "\n") && !framed {
			t.Fatalf("reply is not one JSON document: %q", msg)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// stdioSummary describes a reply as "ID:ok" or "ID:CODE".
func stdioSummary(t testing.TB, msg []byte) string {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
			Data    *struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || r.JSONRPC != "2.0" || r.ID == nil {
		t.Fatalf("bad reply %s (%v)", msg, err)
	}
	if r.Error != nil {
		// The transport's own replies carry the standard message and a reason.
		want := map[int64]string{-32700: "Parse error", -32600: "Invalid Request"}[r.Error.Code]
		if r.Error.Data != nil && (r.Error.Message != want || r.Error.Data.Reason == "") {
			t.Errorf("reply %s: message %q, want %q", msg, r.Error.Message, want)
		}
		return fmt.Sprintf("%s:%d", r.ID, r.Error.Code)
	}
	return string(r.ID) + ":ok"
}

// stdioEcho serves conn like a session that answers each call at once, in
// the reading goroutine: result {"method": M, "params": P}. It returns when
// Read fails, with that error.
func stdioEcho(ctx context.Context, conn mcp.Connection) error {
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		params := req.Params
		if params == nil {
			params = json.RawMessage("null")
		}
		result, _ := json.Marshal(map[string]any{"method": req.Method, "params": params})
		if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: result}); err != nil {
			return err
		}
	}
}

// stdioRun connects a transport to in, serves it with stdioEcho until the
// end of input and returns what was written.
func stdioRun(t testing.TB, in io.Reader, opts StdioOptions) []byte {
	t.Helper()
	out := newStdioOutput()
	conn, err := NewStdioTransport(in, out, opts).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() { done <- stdioEcho(context.Background(), conn) }()
	select {
	case err := <-done:
		if err != io.EOF {
			t.Fatalf("Read ended with %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serving did not end")
	}
	c := conn.(*stdioConn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.inflight) != 0 {
		t.Errorf("%d calls still tracked after every response was written", len(c.inflight))
	}
	return out.bytes()
}

// stdioOneByteReader feeds data through a pipe one byte per Write.
func stdioOneByteReader(data []byte) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for i := range data {
			if _, err := pw.Write(data[i : i+1]); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

func stdioReq(id any, method string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method})
	return string(b)
}

func TestStdioConnCases(t *testing.T) {
	ping1, ping2, ping3 := stdioReq(1, "ping"), stdioReq(2, "ping"), stdioReq("three", "ping")
	notif := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	long := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"s":"` + strings.Repeat("x", 300) + `"}}`
	cases := []struct {
		name   string
		in     string
		opts   StdioOptions
		framed bool // replies framed
		want   []string
	}{
		{"line", ping1 + "\n" + ping2 + "\n", StdioOptions{}, false, []string{"1:ok", "2:ok"}},
		{"framed", stdioFramed(ping1) + stdioFramed(ping2), StdioOptions{}, true, []string{"1:ok", "2:ok"}},
		{"framed first, then mixed", stdioFramed(ping1) + ping2 + "\n" + stdioFramed(ping3), StdioOptions{}, true,
			[]string{"1:ok", "2:ok", `"three":ok`}},
		{"line first, then mixed", ping1 + "\n" + stdioFramed(ping2) + ping3 + "\n", StdioOptions{}, false,
			[]string{"1:ok", "2:ok", `"three":ok`}},
		{"LineMode overrides framed input", stdioFramed(ping1) + stdioFramed(ping2), StdioOptions{LineMode: true}, false,
			[]string{"1:ok", "2:ok"}},
		{"BOM", "\xEF\xBB\xBF" + stdioFramed(ping1), StdioOptions{}, true, []string{"1:ok"}},
		{"notification gets no reply", notif + "\n" + ping1 + "\n", StdioOptions{}, false, []string{"1:ok"}},
		{"blank lines", "\n\r\n" + ping1 + "\n\n\n" + ping2 + "\n\n", StdioOptions{}, false, []string{"1:ok", "2:ok"}},
		{"garbage line", "hello world\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32700", "1:ok"}},
		{"invalid JSON then valid", `{"jsonrpc":"2.0","id":3,` + "\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32700", "1:ok"}},
		{"invalid JSON framed", stdioFramed(`{"jsonrpc":`) + stdioFramed(ping1), StdioOptions{}, true, []string{"null:-32700", "1:ok"}},
		{"trailing garbage after JSON", ping1 + " x\n" + ping2 + "\n", StdioOptions{}, false, []string{"null:-32700", "2:ok"}},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"` + "\xff" + `"}}` + "\n" + ping1 + "\n", StdioOptions{}, false,
			[]string{"null:-32700", "1:ok"}},
		{"object without jsonrpc", `{"foo":1}` + "\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"number", "42\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"string", `"ping"` + "\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"null", "null\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"batch", "[" + ping2 + "," + ping3 + "]\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"empty batch", "[]\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":7,"method":"ping"}` + "\n", StdioOptions{}, false, []string{"7:-32600"}},
		{"missing version keeps string id", `{"id":"x7","method":"ping"}` + "\n", StdioOptions{}, false, []string{`"x7":-32600`}},
		{"method not a string", `{"jsonrpc":"2.0","id":8,"method":5}` + "\n", StdioOptions{}, false, []string{"8:-32600"}},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n" + ping1 + "\n", StdioOptions{}, false,
			[]string{"null:-32600", "1:ok"}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}` + "\n" + ping1 + "\n", StdioOptions{}, false, []string{"null:-32600", "1:ok"}},
		{"non-numeric Content-Length", "Content-Length: abc\r\n\r\n" + ping2 + stdioFramed(ping1), StdioOptions{}, true, []string{"null:-32700", "1:ok"}},
		{"negative Content-Length", "Content-Length: -3\r\n\r\n" + ping2 + "\n" + ping1 + "\n", StdioOptions{}, true, []string{"null:-32700", "1:ok"}},
		{"missing Content-Length", "Content-Type: application/json\r\n\r\n" + ping2 + stdioFramed(ping1), StdioOptions{}, true,
			[]string{"null:-32700", "1:ok"}},
		{"oversized Content-Length", stdioFramed(long) + stdioFramed(ping1), StdioOptions{MaxMessageBytes: 256}, true,
			[]string{"null:-32700", "1:ok"}},
		{"over-long line", long + "\n" + ping1 + "\n", StdioOptions{MaxMessageBytes: 256}, false, []string{"null:-32700", "1:ok"}},
		{"at the limit", long + "\n", StdioOptions{MaxMessageBytes: len(long)}, false, []string{"9:ok"}},
		{"zero Content-Length", "Content-Length: 0\r\n\r\n" + stdioFramed(ping1), StdioOptions{}, true, []string{"null:-32700", "1:ok"}},
		{"input ends inside a body", stdioFramed(ping1) + "Content-Length: 100\r\n\r\n{", StdioOptions{}, true, []string{"1:ok", "null:-32700"}},
		{"last line without newline", ping1 + "\n" + ping2, StdioOptions{}, false, []string{"1:ok", "2:ok"}},
		{"every kind of bad input in a row", "garbage\n{\"foo\":1}\n[1]\nContent-Length: x\r\n\r\n{}\n" + long + "\n" + stdioFramed(ping1),
			StdioOptions{MaxMessageBytes: 256}, false,
			[]string{"null:-32700", "null:-32600", "null:-32600", "null:-32700", "null:-32700", "1:ok"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, how := range []string{"one write", "one byte at a time"} {
				in := io.Reader(strings.NewReader(tc.in))
				if how != "one write" {
					in = stdioOneByteReader([]byte(tc.in))
				}
				out := stdioRun(t, in, tc.opts)
				var got []string
				for _, msg := range stdioReplies(t, out, tc.framed) {
					got = append(got, stdioSummary(t, msg))
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("%s: replies %q, want %q\noutput: %q", how, got, tc.want, out)
				}
			}
		})
	}
}

// Every split of a mixed stream gives the same replies.
func TestStdioConnEverySplit(t *testing.T) {
	in := []byte("\xEF\xBB\xBF" + stdioFramed(stdioReq(1, "ping")) + "\r\n" +
		"oops\n" + stdioReq(2, "ping") + "\n" +
		"content-length: " + strconv.Itoa(len(stdioReq(3, "ping"))) + "\n\n" + stdioReq(3, "ping") + "\n" +
		"Content-Length: ?\r\n\r\n{}" + stdioFramed(stdioReq(4, "ping")))
	want := []string{"1:ok", "null:-32700", "2:ok", "3:ok", "null:-32700", "4:ok"}
	for k := 0; k <= len(in); k++ {
		out := stdioRun(t, stdioSplitReader(in, k), StdioOptions{})
		var got []string
		for _, msg := range stdioReplies(t, out, true) {
			got = append(got, stdioSummary(t, msg))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("split at %d: replies %q, want %q", k, got, want)
		}
	}
}

// Framed replies count UTF-8 bytes, and the body arrives intact.
func TestStdioConnMultibyte(t *testing.T) {
	query := "HTTP 404 の意味は？ 😀"
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"query":%q}}`, query)
	for _, framed := range []bool{true, false} {
		in := req + "\n"
		if framed {
			in = stdioFramed(req)
		}
		out := stdioRun(t, strings.NewReader(in), StdioOptions{})
		msgs := stdioReplies(t, out, framed) // checks Content-Length against the bytes
		if len(msgs) != 1 || !strings.Contains(string(msgs[0]), query) {
			t.Fatalf("framed=%v: replies %q, want one containing %q", framed, msgs, query)
		}
	}
}

// stdioPipeConn is a connection fed through a pipe, for tests that interleave
// input and output.
type stdioPipeConn struct {
	*stdioConn
	in  *io.PipeWriter
	out *stdioOutput
}

func newStdioPipeConn(t testing.TB, opts StdioOptions) *stdioPipeConn {
	t.Helper()
	pr, pw := io.Pipe()
	out := newStdioOutput()
	conn, err := NewStdioTransport(pr, out, opts).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := &stdioPipeConn{stdioConn: conn.(*stdioConn), in: pw, out: out}
	t.Cleanup(func() {
		c.Close()
		pw.Close()
		select {
		case <-c.readerDone:
		case <-time.After(5 * time.Second):
			t.Error("reader goroutine did not exit")
		}
	})
	return c
}

func (c *stdioPipeConn) send(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(c.in, s); err != nil {
		t.Fatal(err)
	}
}

func (c *stdioPipeConn) read(t testing.TB) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return msg
}

func TestStdioCancelledResponseIsDropped(t *testing.T) {
	for _, id := range []any{5, "five"} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			c := newStdioPipeConn(t, StdioOptions{})
			ctx := context.Background()
			c.send(t, stdioReq(id, "slow")+"\n")
			slow := c.read(t).(*jsonrpc.Request)
			idJSON, _ := json.Marshal(id)
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+string(idJSON)+`,"reason":"user"}}`+"\n")
			if n := c.read(t).(*jsonrpc.Request); n.Method != "notifications/cancelled" {
				t.Fatalf("got %q, want the cancellation passed on", n.Method)
			}
			// The session still answers the cancelled call: it must not reach the wire.
			if err := c.Write(ctx, &jsonrpc.Response{ID: slow.ID, Error: errors.New("context canceled")}); err != nil {
				t.Fatalf("Write of a cancelled response: %v", err)
			}
			// The id may be reused for a new call, which is answered.
			c.send(t, stdioReq(id, "ping")+"\n")
			again := c.read(t).(*jsonrpc.Request)
			if err := c.Write(ctx, &jsonrpc.Response{ID: again.ID, Result: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, msg := range stdioReplies(t, c.out.bytes(), false) {
				got = append(got, stdioSummary(t, msg))
			}
			if want := []string{string(idJSON) + ":ok"}; !slices.Equal(got, want) {
				t.Fatalf("replies %q, want %q", got, want)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.inflight) != 0 {
				t.Fatalf("%d calls still tracked", len(c.inflight))
			}
		})
	}
}

// A cancellation for an id that is not in flight changes nothing and is
// not remembered.
func TestStdioCancelUnknownID(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`+"\n")
	c.read(t)
	c.send(t, stdioReq(1, "ping")+"\n")
	req := c.read(t).(*jsonrpc.Request)
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := stdioReplies(t, c.out.bytes(), false); len(got) != 1 {
		t.Fatalf("replies %q, want one", got)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.inflight) != 0 {
		t.Fatalf("tracked %v", c.inflight)
	}
}

// The number of tracked calls is bounded.
func TestStdioTrackingIsBounded(t *testing.T) {
	c := &stdioConn{inflight: make(map[jsonrpc.ID]bool)}
	for i := range stdioMaxTracked + 10 {
		c.track(&jsonrpc.Request{ID: stdioMustID(float64(i)), Method: "ping"})
	}
	if len(c.inflight) != stdioMaxTracked {
		t.Fatalf("tracked %d calls, want the cap %d", len(c.inflight), stdioMaxTracked)
	}
}

func TestStdioEOF(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	c.send(t, stdioReq(1, "ping")+"\n")
	ping := c.read(t).(*jsonrpc.Request)
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: ping.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	c.in.Close()
	for range 2 {
		if _, err := c.Read(context.Background()); err != io.EOF {
			t.Fatalf("Read after end of input: %v, want io.EOF", err)
		}
	}
	select {
	case <-c.readerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("reader goroutine still running after EOF")
	}
}

// At the end of input, Read holds back io.EOF until the calls read so far
// are answered, so that a client that closed its end still gets them.
func TestStdioEOFDrainsCallsInFlight(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	c.send(t, stdioReq(1, "tools/call")+"\n")
	call := c.read(t).(*jsonrpc.Request)
	c.in.Close()
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Read returned %v with a call still in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: call.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != io.EOF {
			t.Fatalf("Read after the last answer: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read still waiting after the last call was answered")
	}
}

func TestStdioReadError(t *testing.T) {
	pr, pw := io.Pipe()
	conn, _ := NewStdioTransport(pr, io.Discard, StdioOptions{}).Connect(context.Background())
	defer conn.Close()
	boom := errors.New("boom")
	pw.CloseWithError(boom)
	if _, err := conn.Read(context.Background()); err != boom {
		t.Fatalf("Read: %v, want %v", err, boom)
	}
}

func TestStdioCloseUnblocksRead(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let Read block
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != io.EOF {
			t.Fatalf("Read after Close: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	err := c.Write(context.Background(), &jsonrpc.Response{ID: stdioMustID(1.0), Result: json.RawMessage(`{}`)})
	if !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("Write after Close: %v, want ErrConnectionClosed", err)
	}
	// The reader goroutine is still in r.Read; it exits once r returns,
	// without delivering what it read.
	select {
	case <-c.readerDone:
		t.Fatal("reader goroutine exited before its read returned")
	default:
	}
	go io.WriteString(c.in, stdioReq(1, "ping")+"\n")
	select {
	case <-c.readerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("reader goroutine did not exit after its read returned")
	}
	if len(c.out.bytes()) != 0 {
		t.Fatalf("wrote %q after Close", c.out.bytes())
	}
}

func TestStdioReadContext(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Read(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Read: %v, want DeadlineExceeded", err)
	}
}

func TestStdioConnectOnce(t *testing.T) {
	tr := NewStdioTransport(strings.NewReader(""), io.Discard, StdioOptions{})
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.SessionID() != "" {
		t.Errorf("SessionID = %q, want empty", conn.SessionID())
	}
	if _, err := tr.Connect(context.Background()); err == nil {
		t.Fatal("second Connect succeeded")
	}
}

// Concurrent Writes produce whole, well-framed messages.
func TestStdioConcurrentWrites(t *testing.T) {
	for _, framed := range []bool{true, false} {
		c := newStdioPipeConn(t, StdioOptions{})
		first := stdioReq(0, "ping")
		if framed {
			first = stdioFramed(first)
		} else {
			first += "\n"
		}
		c.send(t, first)
		c.read(t)
		const writers, each = 8, 50
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					result, _ := json.Marshal(map[string]string{"pad": strings.Repeat("é", 100*w+i)})
					id := stdioMustID(fmt.Sprintf("%d-%d", w, i))
					if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: result}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		msgs := stdioReplies(t, c.out.bytes(), framed)
		if len(msgs) != writers*each {
			t.Fatalf("framed=%v: %d replies, want %d", framed, len(msgs), writers*each)
		}
		c.out.mu.Lock()
		writes := c.out.writes
		c.out.mu.Unlock()
		if writes != writers*each {
			t.Fatalf("framed=%v: %d writes for %d messages, want one each", framed, writes, writers*each)
		}
	}
}

// A response the session sends without an id carries "id": null.
func TestStdioNullIDResponse(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{LineMode: true})
	err := c.Write(context.Background(), &jsonrpc.Response{Error: fmt.Errorf("%w: duplicate id", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"})})
	if err != nil {
		t.Fatal(err)
	}
	msgs := stdioReplies(t, c.out.bytes(), false)
	if len(msgs) != 1 || stdioSummary(t, msgs[0]) != "null:-32600" {
		t.Fatalf("replies %q, want one null:-32600", msgs)
	}
}

// A Write on a done context fails and writes nothing.
func TestStdioWriteContext(t *testing.T) {
	c := newStdioPipeConn(t, StdioOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Write(ctx, &jsonrpc.Response{ID: stdioMustID(1.0), Result: json.RawMessage(`{}`)}); err != context.Canceled {
		t.Fatalf("Write: %v, want context.Canceled", err)
	}
	if len(c.out.bytes()) != 0 {
		t.Fatal("wrote on a done context")
	}
}

// stdioRecorder is a slog.Handler that keeps records.
type stdioRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *stdioRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *stdioRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *stdioRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *stdioRecorder) WithGroup(string) slog.Handler      { return h }

func (h *stdioRecorder) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		s := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			s += " " + a.String()
			return true
		})
		out = append(out, s)
	}
	return out
}

func TestStdioLogging(t *testing.T) {
	const secret = "SECRET-QUERY-TEXT"
	rec := &stdioRecorder{}
	in := stdioFramed(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"query":"`+secret+`"}}`) +
		`{"q":"` + secret + `"` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"q":"` + secret + `"}}` + "\n"
	out := stdioRun(t, strings.NewReader(in), StdioOptions{Logger: slog.New(rec)})
	lines := rec.lines()
	all := strings.Join(lines, "\n")
	if strings.Contains(all, secret) {
		t.Fatalf("logs contain payload text:\n%s", all)
	}
	for _, want := range []string{
		"DEBUG stdio: message dir=recv framing=framed bytes=",
		"method=tools/call id=1",
		"DEBUG stdio: message dir=send framing=framed bytes=",
		"WARN stdio: bad input framing=line bytes=",
		"code=-32700 reason=invalid JSON",
		"method=notifications/initialized",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("logs lack %q:\n%s", want, all)
		}
	}
	// The parse error must not echo any of the bad input.
	for _, msg := range stdioReplies(t, out, true) {
		if strings.Contains(string(msg), `"error"`) && strings.Contains(string(msg), secret) {
			t.Fatalf("error reply echoes the input: %s", msg)
		}
	}
}

func stdioMustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

package rpcconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peer is the backend's end of a Conn: what the Conn writes is read line by
// line, and what the peer writes the Conn reads. It runs in a synctest
// bubble, so a test's timeouts pass on the bubble's clock.
type peer struct {
	t     *testing.T
	c     *Conn
	in    *bufio.Reader  // what the Conn wrote
	out   *io.PipeWriter // what the Conn reads
	toEnd []io.Closer
}

func newPeer(t *testing.T, h Hooks) *peer {
	t.Helper()
	cr, pw := io.Pipe() // the Conn's stdout
	pr, cw := io.Pipe() // the Conn's stdin
	c := New(cw, Options{Hooks: h})
	go c.ReadLoop(cr)
	p := &peer{t: t, c: c, in: bufio.NewReader(pr), out: pw, toEnd: []io.Closer{pw, pr, cw}}
	t.Cleanup(func() {
		c.Shutdown(errors.New("test over"))
		for _, cl := range p.toEnd {
			cl.Close()
		}
		<-c.EOF()
		c.Wait()
	})
	return p
}

// read returns the next line the Conn wrote, without its newline.
func (p *peer) read() string {
	p.t.Helper()
	line, err := p.in.ReadString('\n')
	if err != nil {
		p.t.Fatalf("read from the conn: %v", err)
	}
	return strings.TrimSuffix(line, "\n")
}

// write sends lines to the Conn, each followed by a newline.
func (p *peer) write(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.out, l+"\n"); err != nil {
			p.t.Fatalf("write to the conn: %v", err)
		}
	}
}

type outcome struct {
	res json.RawMessage
	err error
}

// call runs Call in a goroutine and returns where its outcome arrives.
func (p *peer) call(ctx context.Context, method, params string, o CallOptions) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := p.c.Call(ctx, method, json.RawMessage(params), o)
		ch <- outcome{res, err}
	}()
	return ch
}

// A result reaches the caller byte for byte, whitespace and escapes as the
// backend wrote them; a line that is not JSON-RPC is dropped and the
// session goes on; a string id is matched to the call it echoes.
func TestCallResultExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, Hooks{})
		done := p.call(t.Context(), "tools/call", `{"name":"x"}`, CallOptions{})
		if got, want := p.read(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`; got != want {
			t.Fatalf("request:\n got %s\nwant %s", got, want)
		}
		const result = `{ "content" : [ {"type":"text","text":"caf\u00e9 \u003c/b\u003e"} ] }`
		p.write("npm notice: not JSON", `{"jsonrpc":"2.0","id":"1","result":`+result+`}`)
		r := <-done
		if r.err != nil || string(r.res) != result {
			t.Fatalf("Call = %s, %v; want %s", r.res, r.err, result)
		}
	})
}

// A batched request waits until its batch is flushed, and the flush writes
// the requests held since the last one, once; the Conn marks itself again
// when it holds again, and a request without a batch is written at once.
func TestBatchHeldUntilFlushed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, Hooks{})
		lines := make(chan string, 8)
		go func() {
			for {
				line, err := p.in.ReadString('\n')
				if err != nil {
					return
				}
				lines <- strings.TrimSuffix(line, "\n")
			}
		}()
		var batch flush.Set
		expect := func(what string, ids ...int) {
			t.Helper()
			synctest.Wait()
			var got []string
			for len(lines) > 0 {
				got = append(got, <-lines)
			}
			var want []string
			for _, id := range ids {
				want = append(want, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"ping"}`)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: the backend read\n%q\nwant\n%q", what, got, want)
			}
		}
		p.c.Start("ping", nil, CallOptions{Batch: &batch}, func(json.RawMessage, error) {})
		p.c.Start("ping", nil, CallOptions{Batch: &batch}, func(json.RawMessage, error) {})
		expect("two batched requests before the flush")
		go batch.Flush()
		expect("after the flush", 1, 2)
		go batch.Flush()
		expect("after a second flush")
		p.c.Start("ping", nil, CallOptions{Batch: &batch}, func(json.RawMessage, error) {})
		expect("a batched request after the flush")
		go batch.Flush()
		expect("after the next flush", 3)
		go p.c.Start("ping", nil, CallOptions{}, func(json.RawMessage, error) {})
		expect("a request without a batch", 4)
	})
}

// Stamp sees every request's params with the call's Caps, and what it
// returns is what goes out.
func TestStampShapesEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []string
		p := newPeer(t, Hooks{Stamp: func(params, caps json.RawMessage) json.RawMessage {
			seen = append(seen, string(params)+"|"+string(caps))
			return json.RawMessage(`{"stamped":true}`)
		}})
		done := p.call(t.Context(), "tools/list", "", CallOptions{Caps: json.RawMessage(`{"x":{}}`)})
		if got, want := p.read(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"stamped":true}}`; got != want {
			t.Fatalf("request:\n got %s\nwant %s", got, want)
		}
		p.write(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		<-done
		if len(seen) != 1 || seen[0] != `|{"x":{}}` {
			t.Fatalf("Stamp saw %q", seen)
		}
	})
}

// A call's own timeout ends it with ErrTimeout, and the backend is told
// with notifications/cancelled after the request; a late answer is ignored.
func TestTimeoutCancelsAtTheBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, Hooks{})
		start := time.Now()
		done := p.call(t.Context(), "tools/call", `{}`, CallOptions{Timeout: 30 * time.Second})
		p.read()
		if got, want := p.read(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timeout"}}`; got != want {
			t.Fatalf("after the timeout:\n got %s\nwant %s", got, want)
		}
		r := <-done
		if !errors.Is(r.err, ErrTimeout) {
			t.Fatalf("Call error = %v, want ErrTimeout", r.err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Fatalf("timed out after %v, want 30s", d)
		}
		p.write(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		synctest.Wait()
		if n := p.c.InFlight(); n != 0 {
			t.Fatalf("InFlight = %d after the timeout", n)
		}
	})
}

type reason string

func (r reason) Error() string                 { return "cancelled" }
func (r reason) CancelReason() json.RawMessage { return json.RawMessage(r) }

// A caller whose context ends with a Reasoner cause sends the backend its
// reason, compacted onto one line; without one, the gateway's own.
func TestCancelCarriesTheClientsReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, Hooks{})
		ctx, cancel := context.WithCancelCause(t.Context())
		done := p.call(ctx, "tools/call", `{}`, CallOptions{})
		p.read()
		cancel(reason("{\n  \"why\": \"user pressed stop\"\n}"))
		if got, want := p.read(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":{"why":"user pressed stop"}}}`; got != want {
			t.Fatalf("cancellation:\n got %s\nwant %s", got, want)
		}
		if r := <-done; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("Call error = %v, want context.Canceled", r.err)
		}

		ctx, stop := context.WithCancel(t.Context())
		done = p.call(ctx, "tools/call", `{}`, CallOptions{})
		p.read()
		stop()
		if got, want := p.read(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"cancelled by the client"}}`; got != want {
			t.Fatalf("cancellation without a reason:\n got %s\nwant %s", got, want)
		}
		<-done
	})
}

// The backend's own requests: ping is answered at once, a handler's
// *jsonrpc.Error keeps its code, any other error is -32603, no handler is
// -32601; a request the backend cancels gets no answer.
func TestBackendRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p := newPeer(t, Hooks{Request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			switch method {
			case "sampling/createMessage":
				return json.RawMessage("{\n\"ok\": 1}"), nil
			case "roots/list":
				return nil, &jsonrpc.Error{Code: -32042, Message: "no roots"}
			case "wait":
				<-ctx.Done()
				close(release)
				return nil, ctx.Err()
			}
			return nil, errors.New("broken")
		}})
		p.write(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if got, want := p.read(), `{"jsonrpc":"2.0","id":"p","result":{}}`; got != want {
			t.Fatalf("ping:\n got %s\nwant %s", got, want)
		}
		p.write(`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`)
		if got, want := p.read(), `{"jsonrpc":"2.0","id":7,"result":{"ok":1}}`; got != want {
			t.Fatalf("result:\n got %s\nwant %s", got, want)
		}
		p.write(`{"jsonrpc":"2.0","id":8,"method":"roots/list"}`)
		if got, want := p.read(), `{"jsonrpc":"2.0","id":8,"error":{"code":-32042,"message":"no roots"}}`; got != want {
			t.Fatalf("error:\n got %s\nwant %s", got, want)
		}
		p.write(`{"jsonrpc":"2.0","id":9,"method":"other"}`)
		if got, want := p.read(), `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"broken"}}`; got != want {
			t.Fatalf("other error:\n got %s\nwant %s", got, want)
		}
		p.write(`{"jsonrpc":"2.0","id":10,"method":"wait"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)
		<-release
		p.write(`{"jsonrpc":"2.0","id":"p2","method":"ping"}`)
		if got, want := p.read(), `{"jsonrpc":"2.0","id":"p2","result":{}}`; got != want {
			t.Fatalf("after a cancelled request the next line is %s, want %s", got, want)
		}

		q := newPeer(t, Hooks{})
		q.write(`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`)
		if got, want := q.read(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`; got != want {
			t.Fatalf("without a handler:\n got %s\nwant %s", got, want)
		}
	})
}

// Progress reaches the call that asked for it, with its token cleared, and
// none after the call returns; other notifications go to Notify.
func TestProgressAndNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var notes []string
		p := newPeer(t, Hooks{Notify: func(method string, params json.RawMessage) {
			notes = append(notes, method+" "+string(params))
		}})
		var progress []float64
		done := p.call(t.Context(), "tools/call", `{"_meta":{"progressToken":"gw-1"}}`, CallOptions{
			Token: "gw-1",
			Progress: func(n *mcp.ProgressNotificationParams) {
				if n.ProgressToken != nil {
					t.Errorf("progress token not cleared: %v", n.ProgressToken)
				}
				progress = append(progress, n.Progress)
			},
		})
		p.read()
		p.write(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"gw-1","progress":1}}`,
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
			`{"jsonrpc":"2.0","id":1,"result":{}}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"gw-1","progress":2}}`,
		)
		<-done
		synctest.Wait()
		if len(progress) != 1 || progress[0] != 1 {
			t.Errorf("progress = %v, want [1]", progress)
		}
		if len(notes) != 1 || notes[0] != "notifications/tools/list_changed " {
			t.Errorf("notifications = %q", notes)
		}
	})
}

// Shutdown fails every pending call and every later one with its error;
// the first error wins.
func TestShutdownFailsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, Hooks{})
		done := p.call(t.Context(), "tools/call", `{}`, CallOptions{})
		p.read()
		first := errors.New("backend crashed")
		p.c.Shutdown(first)
		p.c.Shutdown(errors.New("stopped"))
		if r := <-done; r.err != first {
			t.Fatalf("pending call error = %v, want %v", r.err, first)
		}
		if _, err := p.c.Call(t.Context(), "tools/list", nil, CallOptions{}); err != first {
			t.Fatalf("later call error = %v, want %v", err, first)
		}
		if err := p.c.Notify("notifications/initialized", nil); err != first {
			t.Fatalf("later notification error = %v, want %v", err, first)
		}
		if p.c.Context().Err() == nil {
			t.Fatal("Context not cancelled by Shutdown")
		}
	})
}

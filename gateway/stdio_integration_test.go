package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTestServer returns a go-sdk server with two tools: "echo" returns
// its text, "block" waits until its call is cancelled (and reports that on
// blocked and cancelled).
func stdioTestServer(blocked, cancelled chan<- struct{}) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "0.0.1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "block", Description: "Waits to be cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			blocked <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		})
	return server
}

// stdioClient drives a go-sdk server session through a StdioTransport with
// raw bytes.
type stdioClient struct {
	t       *testing.T
	framed  bool // how sendMsg frames, and how replies must be framed
	in      *io.PipeWriter
	replies chan []byte // closed at the end of output
	session *mcp.ServerSession
	blocked chan struct{}
	cancel  chan struct{}
}

func newStdioClient(t *testing.T, framed bool, opts StdioOptions) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, framed: framed, in: inW, replies: make(chan []byte, 100),
		blocked: make(chan struct{}, 1), cancel: make(chan struct{}, 1)}
	server := stdioTestServer(c.blocked, c.cancel)
	session, err := server.Connect(context.Background(), NewStdioTransport(inR, outW, opts), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.session = session
	go func() {
		session.Wait()
		outW.Close()
	}()
	go c.readReplies(outR)
	t.Cleanup(func() {
		inW.Close()
		session.Close()
	})
	return c
}

var stdioReplyHeader = regexp.MustCompile(`^Content-Length: ([0-9]+)\r\n$`)

// readReplies splits the output, strictly, into replies.
func (c *stdioClient) readReplies(r io.Reader) {
	defer close(c.replies)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if line != "" {
				c.t.Errorf("output ends with %q", line)
			}
			return
		}
		msg := []byte(strings.TrimSuffix(line, "\n"))
		if c.framed {
			m := stdioReplyHeader.FindStringSubmatch(line)
			if m == nil {
				c.t.Errorf("bad reply header %q", line)
				return
			}
			if blank, _ := br.ReadString('\n'); blank != "\r\n" {
				c.t.Errorf("header not followed by CRLF: %q", blank)
				return
			}
			n, _ := strconv.Atoi(m[1])
			msg = make([]byte, n)
			if _, err := io.ReadFull(br, msg); err != nil {
				c.t.Errorf("reading a %d-byte body: %v", n, err)
				return
			}
		}
		if !json.Valid(msg) {
			c.t.Errorf("reply is not JSON: %q", msg)
			return
		}
		c.replies <- msg
	}
}

func (c *stdioClient) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, raw); err != nil {
		c.t.Fatal(err)
	}
}

// sendMsg sends one message in the client's framing.
func (c *stdioClient) sendMsg(msg string) {
	c.t.Helper()
	if c.framed {
		c.send(stdioFramed(msg))
	} else {
		c.send(msg + "\n")
	}
}

func (c *stdioClient) reply() []byte {
	c.t.Helper()
	select {
	case msg, ok := <-c.replies:
		if !ok {
			c.t.Fatal("output ended, want a reply")
		}
		return msg
	case <-time.After(10 * time.Second):
		c.t.Fatal("no reply")
	}
	return nil
}

// expect reads the next reply, checks its summary (see stdioSummary) and
// that it contains each of parts, and returns it.
func (c *stdioClient) expect(summary string, parts ...string) []byte {
	c.t.Helper()
	msg := c.reply()
	if got := stdioSummary(c.t, msg); got != summary {
		c.t.Fatalf("reply %s: got %s, want %s", msg, got, summary)
	}
	for _, p := range parts {
		if !strings.Contains(string(msg), p) {
			c.t.Fatalf("reply %s lacks %s", msg, p)
		}
	}
	return msg
}

// finish ends the input and checks that the session ends cleanly with no
// reply left over.
func (c *stdioClient) finish() {
	c.t.Helper()
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.session.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("session ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		c.t.Fatal("session did not end at end of input")
	}
	for msg := range c.replies {
		c.t.Errorf("unexpected reply %s", msg)
	}
}

const (
	stdioInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	stdioInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	stdioToolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	stdioPing        = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	stdioEchoCall    = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"HTTP 404 の意味は？"}}}`
)

func TestStdioServerSession(t *testing.T) {
	for _, framed := range []bool{true, false} {
		t.Run(map[bool]string{true: "framed", false: "line"}[framed], func(t *testing.T) {
			c := newStdioClient(t, framed, StdioOptions{})
			c.sendMsg(stdioInitialize)
			c.expect("1:ok", `"protocolVersion":"2025-06-18"`, `"name":"stdio-test"`)
			c.sendMsg(stdioInitialized)
			c.sendMsg(stdioToolsList)
			c.expect("2:ok", `"name":"echo"`, `"name":"block"`)
			c.sendMsg(stdioPing)
			c.expect("3:ok", `"result":{}`)
			c.sendMsg(stdioEchoCall)
			c.expect("4:ok", `"text":"HTTP 404 の意味は？"`)
			c.finish()
		})
	}
}

// One stream mixing garbage, blank lines, bad headers and valid messages,
// sent piece by piece: each bad piece gets exactly one error, each good one
// its reply, in order.
func TestStdioServerMixedStream(t *testing.T) {
	pieces, want := stdioMixedStream()
	c := newStdioClient(t, true, StdioOptions{MaxMessageBytes: 4096})
	for i, p := range pieces {
		c.send(p)
		if want[i] != "" {
			c.expect(want[i])
		}
	}
	c.finish()
}

// The same stream in one write: the same replies. Errors keep their order;
// the server may answer requests in any order around them.
func TestStdioServerMixedStreamAtOnce(t *testing.T) {
	pieces, want := stdioMixedStream()
	c := newStdioClient(t, true, StdioOptions{MaxMessageBytes: 4096})
	go io.WriteString(c.in, strings.Join(pieces, ""))
	var wantAll, wantErrors []string
	for _, w := range want {
		if w != "" {
			wantAll = append(wantAll, w)
			if strings.HasPrefix(w, "null:") {
				wantErrors = append(wantErrors, w)
			}
		}
	}
	var got, gotErrors []string
	for range wantAll {
		s := stdioSummary(t, c.reply())
		got = append(got, s)
		if strings.HasPrefix(s, "null:") {
			gotErrors = append(gotErrors, s)
		}
	}
	slices.Sort(got)
	slices.Sort(wantAll)
	if !slices.Equal(got, wantAll) || !slices.Equal(gotErrors, wantErrors) {
		t.Fatalf("replies %q (errors %q), want %q (errors %q)", got, gotErrors, wantAll, wantErrors)
	}
	c.finish()
}

// stdioMixedStream returns the pieces of a stream and the reply each piece
// should get ("" for none).
func stdioMixedStream() (pieces, want []string) {
	add := func(p, w string) {
		pieces = append(pieces, p)
		want = append(want, w)
	}
	add(stdioFramed(stdioInitialize), "1:ok")
	add("this is not JSON\n", "null:-32700")
	add("\n\r\n   \n", "")
	add(stdioInitialized+"\n", "")
	add("Content-Length: nope\r\nContent-Type: application/json\r\n\r\n"+stdioPing, "null:-32700")
	add(stdioFramed(stdioToolsList), "2:ok")
	add(`{"foo":1}`+"\n", "null:-32600")
	add(`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`+"\n", "null:-32600")
	add(`{"jsonrpc":"2.0","id":3,`+"\n", "null:-32700")
	add(stdioPing+"\n", "3:ok")
	add(stdioFramed(`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":"`+strings.Repeat("x", 5000)+`"}}`), "null:-32700")
	add("content-length: "+strconv.Itoa(len(stdioEchoCall))+"\n\n"+stdioEchoCall, "4:ok")
	add(`{"jsonrpc":"1.0","id":5,"method":"ping"}`+"\n", "5:-32600")
	add(`{"jsonrpc":"2.0","id":6,"method":"no/such/method"}`+"\n", "6:-32601")
	add(strings.Repeat("y", 5000)+"\n", "null:-32700")
	add(stdioFramed(`{"jsonrpc":"2.0","id":7,"method":"ping"}`), "7:ok")
	return pieces, want
}

// A cancelled call gets no response, though go-sdk produces one.
func TestStdioServerCancellation(t *testing.T) {
	for _, framed := range []bool{true, false} {
		t.Run(map[bool]string{true: "framed", false: "line"}[framed], func(t *testing.T) {
			rec := &stdioRecorder{}
			c := newStdioClient(t, framed, StdioOptions{Logger: slog.New(rec)})
			c.sendMsg(stdioInitialize)
			c.expect("1:ok")
			c.sendMsg(stdioInitialized)
			c.sendMsg(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"block","arguments":{}}}`)
			<-c.blocked
			c.sendMsg(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`)
			select {
			case <-c.cancel: // go-sdk cancelled the handler's context
			case <-time.After(10 * time.Second):
				t.Fatal("handler not cancelled")
			}
			// Wait until go-sdk has written the response, which the
			// transport logs as dropped.
			deadline := time.Now().Add(10 * time.Second)
			for !slices.ContainsFunc(rec.lines(), func(l string) bool { return strings.Contains(l, "response dropped") }) {
				if time.Now().After(deadline) {
					t.Fatal("the cancelled call's response was never written")
				}
				select {
				case msg := <-c.replies:
					t.Fatalf("reply to the cancelled call: %s", msg)
				case <-time.After(5 * time.Millisecond):
				}
			}
			c.sendMsg(stdioPing)
			c.expect("3:ok")
			c.finish()
		})
	}
}

// Shutting the session down closes the connection and ends it cleanly.
func TestStdioServerSessionClose(t *testing.T) {
	c := newStdioClient(t, false, StdioOptions{})
	c.sendMsg(stdioInitialize)
	c.expect("1:ok")
	done := make(chan error, 1)
	go func() { done <- c.session.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("session Close hung")
	}
}

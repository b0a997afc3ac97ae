package testutil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultTimeout bounds every wait of a Client unless its options say
// otherwise: generous, for a loaded machine running everything under -race.
const DefaultTimeout = 30 * time.Second

// Msg is one message from the peer: its exact bytes, and whether it came
// Content-Length framed.
type Msg struct {
	Raw    []byte
	Framed bool
	err    json.RawMessage // the error member of a response, found at dispatch
}

func (m Msg) String() string { return string(m.Raw) }

// Map decodes the message, numbers as json.Number; nil if it is not a JSON
// object.
func (m Msg) Map() map[string]any {
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(m.Raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// Member returns the exact bytes of one top-level member ("result",
// "error"), nil if there is none.
func (m Msg) Member(name string) json.RawMessage {
	var v map[string]json.RawMessage
	json.Unmarshal(m.Raw, &v)
	return v[name]
}

// ID returns the id as written (`7`, `"abc"`, `null`), "" if there is none.
func (m Msg) ID() string { return string(m.Member("id")) }

// Method returns the method of a request or notification, "" for a response.
func (m Msg) Method() string {
	var s string
	json.Unmarshal(m.Member("method"), &s)
	return s
}

// Result returns the result object; it fails the test if there is none.
func (m Msg) Result(t testing.TB) map[string]any {
	t.Helper()
	res, ok := m.Map()["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %s", m.Raw)
	}
	return res
}

// Error returns the error member; it fails the test if there is none.
func (m Msg) Error(t testing.TB) (code int, msg string, data map[string]any) {
	t.Helper()
	e, ok := m.Map()["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error, got %s", m.Raw)
	}
	n, _ := e["code"].(json.Number).Int64()
	msg, _ = e["message"].(string)
	data, _ = e["data"].(map[string]any)
	return int(n), msg, data
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Framed writes Content-Length framed messages instead of lines.
	// Replies are read in whichever framing the peer uses.
	Framed bool
	// Timeout bounds each wait; DefaultTimeout if zero.
	Timeout time.Duration
	// Context, if set, is added to a failure's message (the peer's stderr).
	Context func() string
	// Discard counts the messages nobody awaits, by method (Counts),
	// instead of keeping them: for long runs with floods.
	Discard bool
}

// Client is a JSON-RPC client over a peer's stdin and stdout: requests it
// numbers itself are matched to their responses by id; everything else —
// notifications, the peer's requests, responses to messages sent raw — is
// kept in arrival order, to be read one by one (Next) or looked up (Since).
// One goroutine reads the peer until it closes its output.
type Client struct {
	t   testing.TB
	o   ClientOptions
	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	nextID  int
	calls   map[string]*call // by id as written, until awaited
	log     []Msg            // unclaimed messages, in order
	cursor  int              // Next's position in log
	changed chan struct{}    // closed and replaced when log grows
	counts  map[string]int   // with Discard: unclaimed messages by method
	eof     chan struct{}
	readErr error // what ended reading; set before eof is closed
	slow    atomic.Bool
}

// call is a request of Request; done is closed when its response has come.
type call struct {
	done chan struct{}
	resp Msg
}

// NewClient starts reading r; messages go to w.
func NewClient(t testing.TB, w io.Writer, r io.Reader, o ClientOptions) *Client {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	c := &Client{t: t, o: o, w: w, nextID: 100, calls: map[string]*call{}, changed: make(chan struct{}), counts: map[string]int{}, eof: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(r, 64<<10))
	return c
}

func (c *Client) readLoop(r *bufio.Reader) {
	defer close(c.eof)
	for i := 0; ; i++ {
		if c.slow.Load() && i%20 == 0 {
			time.Sleep(time.Millisecond)
		}
		m, err := readMsg(r)
		if len(bytes.TrimSpace(m.Raw)) > 0 {
			c.dispatch(m)
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// readMsg reads one message: a line, or a Content-Length framed body.
func readMsg(r *bufio.Reader) (Msg, error) {
	line, err := r.ReadBytes('\n')
	name, val, ok := strings.Cut(string(line), ":")
	if err != nil || !ok || !strings.EqualFold(name, "Content-Length") {
		return Msg{Raw: bytes.TrimRight(line, "\r\n")}, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if err != nil {
		return Msg{Raw: line}, fmt.Errorf("bad Content-Length %q", val)
	}
	if _, err := textproto.NewReader(r).ReadMIMEHeader(); err != nil { // up to the empty line
		return Msg{}, err
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return Msg{Raw: body, Framed: true}, err
}

func (c *Client) dispatch(m Msg) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(m.Raw, &env)
	m.err = env.Error
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.calls[string(env.ID)]; env.Method == "" && r != nil && r.resp.Raw == nil {
		r.resp = m
		close(r.done)
		return
	}
	if c.o.Discard {
		c.counts[env.Method]++
		return
	}
	c.log = append(c.log, m)
	close(c.changed)
	c.changed = make(chan struct{})
}

// Send writes one message as it is, in the client's framing.
func (c *Client) Send(msg string) {
	c.t.Helper()
	if err := c.write(append([]byte(msg), '\n')); err != nil {
		c.fatalf("write: %v", err)
	}
}

// write writes one message that ends in a newline, framed if the client
// is; one allocation per message in line mode, as the benchmarks count the
// client's allocations too.
func (c *Client) write(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.o.Framed {
		body := msg[:len(msg)-1]
		_, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body)
		return err
	}
	_, err := c.w.Write(msg)
	return err
}

// Request sends a request with the client's next id and returns the id.
func (c *Client) Request(method, params string) string {
	c.t.Helper()
	id, err := c.request(method, params)
	if err != nil {
		c.fatalf("write: %v", err)
	}
	return id
}

func (c *Client) request(method, params string) (string, error) {
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.calls[id] = &call{done: make(chan struct{})}
	c.mu.Unlock()
	b := append(make([]byte, 0, 48+len(method)+len(params)), `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendQuote(append(append(b, id...), `,"method":`...), method)
	if params != "" {
		b = append(append(b, `,"params":`...), params...)
	}
	return id, c.write(append(b, "}\n"...))
}

// Await waits up to d for the response to a request of Request.
func (c *Client) Await(id string, d time.Duration) Msg {
	c.t.Helper()
	m, err := c.await(id, d)
	if err != nil {
		c.fatalf("%v", err)
	}
	return m
}

func (c *Client) await(id string, d time.Duration) (Msg, error) {
	c.mu.Lock()
	r := c.calls[id]
	c.mu.Unlock()
	if r == nil {
		return Msg{}, fmt.Errorf("no request %s in flight", id)
	}
	select {
	case <-r.done:
	case <-c.eof: // everything read was dispatched: done is final
	case <-time.After(d):
		return Msg{}, fmt.Errorf("no response to %s within %s", id, d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.resp.Raw == nil {
		return Msg{}, fmt.Errorf("peer closed its output while waiting for %s: %v", id, c.readErr)
	}
	delete(c.calls, id)
	return r.resp, nil
}

// Answered reports, without waiting, whether the response to a request
// of Request that nobody has awaited yet has come.
func (c *Client) Answered(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.calls[id]
	return r != nil && r.resp.Raw != nil
}

// Call sends a request and waits for its response.
func (c *Client) Call(method, params string) Msg {
	c.t.Helper()
	return c.Await(c.Request(method, params), c.o.Timeout)
}

// Do is Call for code that must not fail the test from its goroutine (a
// benchmark's workers): a JSON-RPC error is returned as an error too.
func (c *Client) Do(method, params string) (Msg, error) {
	id, err := c.request(method, params)
	if err != nil {
		return Msg{}, err
	}
	m, err := c.await(id, c.o.Timeout)
	if err == nil && len(m.err) > 0 && string(m.err) != "null" {
		err = fmt.Errorf("%s: error %s", method, m.err)
	}
	return m, err
}

// Next returns the next message not claimed by Await, in arrival order.
func (c *Client) Next() Msg {
	c.t.Helper()
	var m Msg
	c.waitLog(c.o.Timeout, "a message", func() bool {
		if c.cursor == len(c.log) {
			return false
		}
		m = c.log[c.cursor]
		c.cursor++
		return true
	})
	return m
}

// WaitNote waits up to d for the first message with this method after
// mark.
func (c *Client) WaitNote(mark int, method string, d time.Duration) Msg {
	c.t.Helper()
	var got []Msg
	c.waitLog(d, method, func() bool { got = c.since(mark, method); return len(got) > 0 })
	return got[0]
}

// waitLog waits up to d until found, called with c.mu held, holds; it
// fails the test with what when d passes or the peer closes its output
// first. Every wait for an unclaimed message goes through it.
func (c *Client) waitLog(d time.Duration, what string, found func() bool) {
	c.t.Helper()
	timeout := time.After(d)
	for {
		c.mu.Lock()
		ok, changed := found(), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-c.eof:
			c.mu.Lock()
			ok = found()
			c.mu.Unlock()
			if !ok {
				c.fatalf("peer closed its output while waiting for %s: %v", what, c.readErr)
			}
			return
		case <-timeout:
			c.fatalf("no %s within %s", what, d)
		}
	}
}

// Mark is a position in the log of unclaimed messages, for Since.
func (c *Client) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

// Since returns the messages with this method that arrived after mark;
// method "" selects the responses nobody awaited (to ids sent raw, or
// unknown).
func (c *Client) Since(mark int, method string) []Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since(mark, method)
}

func (c *Client) since(mark int, method string) []Msg {
	var out []Msg
	for _, m := range c.log[mark:] {
		if m.Method() == method {
			out = append(out, m)
		}
	}
	return out
}

// EOF is closed when the peer has closed its output and everything before
// has been dispatched.
func (c *Client) EOF() <-chan struct{} { return c.eof }

func (c *Client) fatalf(format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if c.o.Context != nil {
		msg += "\n" + c.o.Context()
	}
	c.t.Fatal(msg)
}

// Slow makes the client read like one slower than its servers, while on:
// a pause of 1 ms every 20 messages.
func (c *Client) Slow(on bool) { c.slow.Store(on) }

// Counts returns, with Discard, how many messages nobody awaited came, by
// method ("" for responses).
func (c *Client) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

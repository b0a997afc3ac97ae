package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// FuzzAmbiguousMembers feeds tools/call requests whose params may hold
// members given twice or in another case (at any depth, through lazy
// mode's call_tool too) through the front, in both eras, and checks one
// reading of each: either the request is refused and no backend gets it,
// or what the gateway decided on — the tool it routed, admitted and
// audited (CallRecord: server, own name, the arguments' digest) — is what
// the backend reads, however it decodes the params: exactly with the last
// or the first of repeated members, or as Go's encoding/json does (without
// case, the last one).
//
// The backend is in the test's process (backends.Options.Dial), records
// every tools/call's params and answers at once; after each fuzzed request
// a known call (the sentinel) is answered, so that whatever the fuzzed
// request sent the backend arrived before it: no waiting on time.
func FuzzAmbiguousMembers(f *testing.F) {
	for _, seed := range []struct {
		params     string
		perRequest bool
	}{
		{`{"name":"tb.echo","arguments":{"a":1}}`, false},
		{`{"name":"tb.echo","arguments":{"a":1}}`, true},
		{`{"name":"tb.stats","Name":"echo","arguments":{}}`, false},
		{`{"name":"tb.stats","Name":"echo","arguments":{}}`, true},
		{`{"name":"tb.echo","name":"tb.stats"}`, false},
		{`{"name":"tb.echo","arguments":{"p":"/safe"},"ARGUMENTS":{"p":"/etc/shadow"}}`, true},
		{`{"name":"tb.echo","arguments":{"p":"/safe","P":"/etc"}}`, false},
		{`{"name":"gateway.call_tool","arguments":{"name":"tb.stats","Name":"tb.echo","arguments":{}}}`, false},
		{`{"name":"gateway.call_tool","arguments":{"name":"tb.echo","arguments":{"x":1},"argumentſ":{"x":2}}}`, true},
		{`{"name":"tb.echo","n\u0061me":"tb.stats"}`, false},
		{`{"name":"tb.echo","\u212Aey":1,"key":2}`, false},
		{`{"name":"tb.echo","_meta":{"progressToken":1,"ProgressToken":2}}`, true},
	} {
		f.Add(seed.params, seed.perRequest)
	}
	h := newMembersHarness(f)
	f.Fuzz(func(t *testing.T, params string, perRequest bool) {
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(params)) != nil || compact.Len() == 0 || compact.Bytes()[0] != '{' {
			t.Skip("params must be one JSON object")
		}
		h.check(t, compact.Bytes(), perRequest)
	})
}

// membersHarness is a gateway in lazy mode (its meta tools and direct
// calls) over one in-process backend tb with the tools echo and stats,
// and a client session of each era.
type membersHarness struct {
	backend  *recordingBackend
	sessions [2]*lineClient // handshake era, 2026-07-28

	mu      sync.Mutex
	records []CallRecord
	n       int // request ids
}

const perRequestMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func newMembersHarness(f *testing.F) *membersHarness {
	h := &membersHarness{backend: &recordingBackend{}}
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	cfg.Gateway.ToolsMode = "lazy"
	cfg.Servers = []config.Server{{Name: "tb", Prefix: "tb", Command: "fake", Enabled: true, Restart: "never"}}
	mgr := backends.New(backends.Options{
		Servers:        cfg.Servers,
		DefaultTimeout: 10 * time.Second,
		StartupTimeout: 10 * time.Second,
		Dial: func(context.Context, config.Server) (io.ReadWriteCloser, error) {
			return h.backend.dial(), nil
		},
	})
	gw := New(Options{Config: cfg, Backends: mgr, OnCall: func(r CallRecord) {
		h.mu.Lock()
		h.records = append(h.records, r)
		h.mu.Unlock()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(func() { mgr.Close() })
	f.Cleanup(cancel)
	mgr.Start(ctx)
	for i := range h.sessions {
		c := serveLines(ctx, gw)
		f.Cleanup(c.close)
		h.sessions[i] = c
	}
	hs := h.sessions[0]
	hs.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	if _, err := hs.await(`"init"`); err != nil {
		f.Fatal(err)
	}
	hs.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// check sends one tools/call with params (compact JSON) and checks what
// came of it.
func (h *membersHarness) check(t *testing.T, params []byte, perRequest bool) {
	c := h.sessions[0]
	if perRequest {
		c = h.sessions[1]
		meta := wire.Member(params, "_meta")
		if len(meta) == 0 || meta[0] != '{' {
			meta = json.RawMessage(`{}`)
		}
		var err error
		for _, k := range []string{metaProtocolVersion, metaClientCaps} {
			if meta, err = wire.SetMember(meta, k, wire.Member(json.RawMessage(perRequestMeta), k)); err != nil {
				t.Skip("_meta is no object")
			}
		}
		if params, err = wire.SetMember(params, "_meta", meta); err != nil {
			t.Skip("params are no object")
		}
	}
	h.mu.Lock()
	h.n++
	id := strconv.Itoa(h.n)
	h.records = h.records[:0]
	h.mu.Unlock()
	mark := h.backend.mark()

	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + string(params) + `}`)
	resp, err := c.await(id)
	if err != nil {
		t.Fatal(err)
	}
	// The sentinel: whatever the fuzzed call sent tb was written before it.
	sentinel := `{"name":"tb.echo","arguments":{"sentinel":` + id + `}}`
	if perRequest {
		sentinel = `{"name":"tb.echo","arguments":{"sentinel":` + id + `},"_meta":` + perRequestMeta + `}`
	}
	c.send(`{"jsonrpc":"2.0","id":"s` + id + `","method":"tools/call","params":` + sentinel + `}`)
	if r, err := c.await(`"s` + id + `"`); err != nil || wire.Member(r, "result") == nil {
		t.Fatalf("sentinel: %s %v", r, err)
	}
	got := h.backend.since(mark)
	if len(got) == 0 || !bytes.Contains(got[len(got)-1], []byte(`"sentinel":`+id)) {
		t.Fatalf("the backend did not get the sentinel last: %q", got)
	}
	got = got[:len(got)-1]
	h.mu.Lock()
	records := append([]CallRecord(nil), h.records...)
	h.mu.Unlock()
	var rec *CallRecord
	for i := range records {
		if records[i].ArgsDigest != digestOf([]byte(`{"sentinel":`+id+`}`)) {
			rec = &records[i]
		}
	}

	if len(got) == 0 {
		return // refused, or answered without tb (an unknown name, find_tools, ...)
	}
	if len(got) > 1 {
		t.Fatalf("one request reached the backend %d times: %q", len(got), got)
	}
	if rec == nil || rec.Server != "tb" {
		t.Fatalf("the backend got %s, but the gateway recorded %+v (response %s)", got[0], rec, resp)
	}
	for _, reading := range readings(got[0]) {
		if reading.name != rec.Own {
			t.Errorf("%s: the gateway routed and admitted %s (own %q), the backend reads name %q in %s", reading.how, rec.Tool, rec.Own, reading.name, got[0])
		}
		if d := digestOf(reading.args); d != rec.ArgsDigest && !(len(reading.args) == 0 && rec.ArgsDigest == digestOf(nil)) {
			t.Errorf("%s: the gateway saw arguments %s, the backend reads %s in %s", reading.how, rec.ArgsDigest, reading.args, got[0])
		}
	}
}

func digestOf(args []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(args))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// reading is what one decoder reads of a tools/call's params.
type reading struct {
	how  string
	name string
	args json.RawMessage
}

// readings are the params as three kinds of decoder read them.
func readings(params json.RawMessage) []reading {
	var goJSON struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(params, &goJSON)
	last := reading{how: "exact, last wins"}
	last.name, _ = wire.Unquote(wire.Member(params, "name"))
	last.args = wire.Member(params, "arguments")
	first := reading{how: "exact, first wins"}
	var seenName, seenArgs bool
	_ = wire.EachMember(params, func(k string, v json.RawMessage) {
		switch {
		case k == "name" && !seenName:
			first.name, _ = wire.Unquote(v)
			seenName = true
		case k == "arguments" && !seenArgs:
			first.args = v
			seenArgs = true
		}
	})
	return []reading{last, first, {how: "encoding/json (without case, last wins)", name: goJSON.Name, args: goJSON.Arguments}}
}

// recordingBackend is an MCP server in the test's process: it answers
// initialize, the tools list (echo, stats) and every tools/call at once,
// and records each tools/call's params.
type recordingBackend struct {
	mu    sync.Mutex
	calls []json.RawMessage
}

func (b *recordingBackend) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

func (b *recordingBackend) since(mark int) []json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]json.RawMessage(nil), b.calls[mark:]...)
}

// dial starts a session: its goroutine ends when the gateway closes its
// end.
func (b *recordingBackend) dial() io.ReadWriteCloser {
	toBackend, fromGateway := io.Pipe()
	fromBackend, toGateway := io.Pipe()
	go func() {
		defer toGateway.Close()
		r := bufio.NewReader(toBackend)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			m, err := wire.Decode(bytes.TrimSpace(line))
			if err != nil || !m.IsCall() {
				continue
			}
			var result string
			switch m.Method {
			case "initialize":
				result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"tb","version":"1"}}`
			case "tools/list":
				result = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"stats","inputSchema":{"type":"object"}}]}`
			case "tools/call":
				b.mu.Lock()
				b.calls = append(b.calls, bytes.Clone(m.Params))
				b.mu.Unlock()
				result = `{"content":[]}`
			default:
				if _, err := toGateway.Write(wire.AppendError(nil, m.ID, -32601, "Method not found", nil)); err != nil {
					return
				}
				toGateway.Write([]byte("\n"))
				continue
			}
			if _, err := toGateway.Write(append(wire.AppendResult(nil, m.ID, json.RawMessage(result)), '\n')); err != nil {
				return
			}
		}
	}()
	return struct {
		io.Reader
		io.Writer
		io.Closer
	}{fromBackend, fromGateway, closers{fromGateway, fromBackend}}
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}

// lineClient is a line-delimited client of Gateway.ServeStdio that needs no
// *testing.T (a fuzz target's setup outlives each input's): requests are
// sent one at a time and their responses awaited by id.
type lineClient struct {
	in     *io.PipeWriter
	lines  chan []byte
	served chan struct{}
}

func serveLines(ctx context.Context, gw *Gateway) *lineClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{in: inW, lines: make(chan []byte, 64), served: make(chan struct{})}
	go func() {
		defer close(c.served)
		gw.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			c.lines <- bytes.TrimSpace(line)
		}
	}()
	return c
}

func (c *lineClient) send(msg string) { c.in.Write([]byte(msg + "\n")) }

// await returns the response to id (its JSON), or to a message that had
// none, skipping anything else the gateway sent; it gives up after a long
// while, for a gateway that never answers.
func (c *lineClient) await(id string) (json.RawMessage, error) {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return nil, io.EOF
			}
			// A message the gateway could not read at all (invalid UTF-8,
			// say) is answered with a null id.
			if got := string(wire.Member(line, "id")); (got == id || got == "null") && wire.Member(line, "method") == nil {
				return line, nil
			}
		case <-deadline.C:
			return nil, fmt.Errorf("no response to %s", id)
		}
	}
}

func (c *lineClient) close() {
	c.in.Close()
	<-c.served
	for range c.lines { // the reader ends with the gateway's output
	}
}

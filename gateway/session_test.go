package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/stdio"
)

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

// stdioRun serves in with a gateway that has no backends and no answer
// tools until the end of input, and returns what was written.
func stdioRun(t testing.TB, in io.Reader, opts stdio.Options) []byte {
	t.Helper()
	out := &testutil.Buffer{}
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	g := New(Options{Config: cfg})
	done := make(chan error, 1)
	go func() {
		done <- g.serve(context.Background(), newStdioStream(stdio.New(in, out, opts), g.readIdle(), g.log))
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serving did not end")
	}
	return []byte(out.String())
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
		opts   stdio.Options
		framed bool // replies framed
		want   []string
	}{
		{"line", ping1 + "\n" + ping2 + "\n", stdio.Options{}, false, []string{"1:ok", "2:ok"}},
		{"framed", framed(ping1) + framed(ping2), stdio.Options{}, true, []string{"1:ok", "2:ok"}},
		{"framed first, then mixed", framed(ping1) + ping2 + "\n" + framed(ping3), stdio.Options{}, true,
			[]string{"1:ok", "2:ok", `"three":ok`}},
		{"line first, then mixed", ping1 + "\n" + framed(ping2) + ping3 + "\n", stdio.Options{}, false,
			[]string{"1:ok", "2:ok", `"three":ok`}},
		{"LineMode overrides framed input", framed(ping1) + framed(ping2), stdio.Options{LineMode: true}, false,
			[]string{"1:ok", "2:ok"}},
		{"BOM", "\xEF\xBB\xBF" + framed(ping1), stdio.Options{}, true, []string{"1:ok"}},
		{"notification gets no reply", notif + "\n" + ping1 + "\n", stdio.Options{}, false, []string{"1:ok"}},
		{"blank lines", "\n\r\n" + ping1 + "\n\n\n" + ping2 + "\n\n", stdio.Options{}, false, []string{"1:ok", "2:ok"}},
		{"garbage line", "hello world\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32700", "1:ok"}},
		{"invalid JSON then valid", `{"jsonrpc":"2.0","id":3,` + "\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32700", "1:ok"}},
		{"invalid JSON framed", framed(`{"jsonrpc":`) + framed(ping1), stdio.Options{}, true, []string{"null:-32700", "1:ok"}},
		{"trailing garbage after JSON", ping1 + " x\n" + ping2 + "\n", stdio.Options{}, false, []string{"null:-32700", "2:ok"}},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"` + "\xff" + `"}}` + "\n" + ping1 + "\n", stdio.Options{}, false,
			[]string{"null:-32700", "1:ok"}},
		{"object without jsonrpc", `{"foo":1}` + "\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"number", "42\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"string", `"ping"` + "\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"null", "null\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"batch", "[" + ping2 + "," + ping3 + "]\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"empty batch", "[]\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":7,"method":"ping"}` + "\n", stdio.Options{}, false, []string{"7:-32600"}},
		{"missing version keeps string id", `{"id":"x7","method":"ping"}` + "\n", stdio.Options{}, false, []string{`"x7":-32600`}},
		{"method not a string", `{"jsonrpc":"2.0","id":8,"method":5}` + "\n", stdio.Options{}, false, []string{"8:-32600"}},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n" + ping1 + "\n", stdio.Options{}, false,
			[]string{"null:-32600", "1:ok"}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}` + "\n" + ping1 + "\n", stdio.Options{}, false, []string{"null:-32600", "1:ok"}},
		{"non-numeric Content-Length", "Content-Length: abc\r\n\r\n" + ping2 + framed(ping1), stdio.Options{}, true, []string{"null:-32700", "1:ok"}},
		{"negative Content-Length", "Content-Length: -3\r\n\r\n" + ping2 + "\n" + ping1 + "\n", stdio.Options{}, true, []string{"null:-32700", "1:ok"}},
		{"missing Content-Length", "Content-Type: application/json\r\n\r\n" + ping2 + framed(ping1), stdio.Options{}, true,
			[]string{"null:-32700", "1:ok"}},
		{"oversized Content-Length", framed(long) + framed(ping1), stdio.Options{MaxMessageBytes: 256}, true,
			[]string{"null:-32700", "1:ok"}},
		{"over-long line", long + "\n" + ping1 + "\n", stdio.Options{MaxMessageBytes: 256}, false, []string{"null:-32700", "1:ok"}},
		{"at the limit", long + "\n", stdio.Options{MaxMessageBytes: len(long)}, false, []string{"9:ok"}},
		{"zero Content-Length", "Content-Length: 0\r\n\r\n" + framed(ping1), stdio.Options{}, true, []string{"null:-32700", "1:ok"}},
		{"input ends inside a body", framed(ping1) + "Content-Length: 100\r\n\r\n{", stdio.Options{}, true, []string{"1:ok", "null:-32700"}},
		{"last line without newline", ping1 + "\n" + ping2, stdio.Options{}, false, []string{"1:ok", "2:ok"}},
		{"every kind of bad input in a row", "garbage\n{\"foo\":1}\n[1]\nContent-Length: x\r\n\r\n{}\n" + long + "\n" + framed(ping1),
			stdio.Options{MaxMessageBytes: 256}, false,
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
				// Rejects are written at once, go-sdk's replies when ready.
				slices.Sort(got)
				want := slices.Sorted(slices.Values(tc.want))
				if !slices.Equal(got, want) {
					t.Fatalf("%s: replies %q, want %q\noutput: %q", how, got, tc.want, out)
				}
			}
		})
	}
}

// Every split of a mixed stream gives the same replies.
func TestStdioConnEverySplit(t *testing.T) {
	in := []byte("\xEF\xBB\xBF" + framed(stdioReq(1, "ping")) + "\r\n" +
		"oops\n" + stdioReq(2, "ping") + "\n" +
		"content-length: " + strconv.Itoa(len(stdioReq(3, "ping"))) + "\n\n" + stdioReq(3, "ping") + "\n" +
		"Content-Length: ?\r\n\r\n{}" + framed(stdioReq(4, "ping")))
	want := []string{"1:ok", "null:-32700", "2:ok", "3:ok", "null:-32700", "4:ok"}
	for k := 0; k <= len(in); k++ {
		out := stdioRun(t, splitReader(in, k), stdio.Options{})
		var got []string
		for _, msg := range stdioReplies(t, out, true) {
			got = append(got, stdioSummary(t, msg))
		}
		slices.Sort(got)
		if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Fatalf("split at %d: replies %q, want %q", k, got, want)
		}
	}
}

// Framed replies count UTF-8 bytes, and the body arrives intact.
func TestStdioConnMultibyte(t *testing.T) {
	query := "HTTP 404 の意味は？ 😀"
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q}}`, query)
	for _, isFramed := range []bool{true, false} {
		in := init + "\n" + req + "\n"
		if isFramed {
			in = framed(init) + framed(req)
		}
		out := stdioRun(t, strings.NewReader(in), stdio.Options{})
		msgs := stdioReplies(t, out, isFramed) // checks Content-Length against the bytes
		if len(msgs) != 2 || !strings.Contains(string(msgs[1]), query) {
			t.Fatalf("framed=%v: replies %q, want the second containing %q", isFramed, msgs, query)
		}
	}
}

func framed(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// splitReader returns data in two reads, split at k.
func splitReader(data []byte, k int) io.Reader {
	return io.MultiReader(bytes.NewReader(data[:k]), bytes.NewReader(data[k:]))
}

// Closing the session while the reader is still starting calls — inline
// ones and ones that run in a goroutine (lazy call_tool) — neither races
// (a goroutine started after close's wait began) nor hangs; run with -race.
func TestCloseWhileCallsStart(t *testing.T) {
	for round := range 3 {
		cfg := func(c *config.Config) { c.Gateway.ToolsMode = "lazy" }
		gw, parent := newGateway(t, cfg, testServer("tb"))
		ctx, cancel := context.WithCancel(parent)
		inR, inW := io.Pipe()
		served := make(chan error, 1)
		go func() { served <- gw.ServeStdio(ctx, inR, io.Discard) }()
		go func() {
			io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
			io.WriteString(inW, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`+"\n")
			for i := 1; ; i++ {
				var msg string
				if i%2 == 0 {
					msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tb.slow","arguments":{"ms":20}}}`, i)
				} else {
					msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"gateway.call_tool","arguments":{"name":"tb.slow","arguments":{"ms":20}}}}`, i)
				}
				if _, err := io.WriteString(inW, msg+"\n"); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Duration(50+round*50) * time.Millisecond) // the end lands at a different point each round
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("ServeStdio did not return after its context ended")
		}
		inR.CloseWithError(io.ErrClosedPipe)
	}
}

package testutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"
)

// peer answers each request it reads from r on w: first a notification,
// then the response (Content-Length framed for method "framed"), and for
// method "extra" a response to an id nobody asked for.
func peer(r io.Reader, w io.WriteCloser) {
	defer w.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"note","params":{"for":%s}}`+"\n", req.ID)
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q,"n":12345678901234567890}}`, req.ID, req.Method)
		if req.Method == "framed" {
			fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(resp), resp)
		} else {
			fmt.Fprintln(w, resp)
		}
		if req.Method == "extra" {
			fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"stray","result":{}}`)
		}
	}
}

func TestClient(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go peer(inR, outW)
	c := NewClient(t, inW, outR, ClientOptions{Timeout: 10 * time.Second})
	mark := c.Mark()

	r := c.Call("plain", `{}`)
	if r.Framed || r.ID() != "101" || string(r.Member("result")) != `{"method":"plain","n":12345678901234567890}` {
		t.Errorf("plain: %s (framed %v)", r, r.Framed)
	}
	if n := r.Result(t)["n"].(json.Number).String(); n != "12345678901234567890" {
		t.Errorf("n = %s: digits lost", n)
	}
	if r := c.Call("framed", `{}`); !r.Framed || r.ID() != "102" {
		t.Errorf("framed: %s (framed %v)", r, r.Framed)
	}
	id := c.Request("extra", "")
	if r := c.Await(id, 10*time.Second); r.ID() != "103" {
		t.Errorf("extra: %s", r)
	}
	if got := c.WaitNote(mark, "note", 10*time.Second); string(got.Member("params")) != `{"for":101}` {
		t.Errorf("first note %s", got)
	}
	// Raw sends are not matched: their responses come through Next, in
	// order, after the notifications before them.
	c.Send(`{"jsonrpc":"2.0","id":"raw","method":"plain"}`)
	var order []string
	for len(order) < 6 {
		m := c.Next()
		order = append(order, m.Method()+m.ID())
	}
	want := []string{"note", "note", "note", `"stray"`, "note", `"raw"`}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("Next order %q, want %q", order, want)
	}
	if n := len(c.Since(mark, "note")); n != 4 {
		t.Errorf("%d notes since the mark, want 4", n)
	}
	if s := c.Since(0, ""); len(s) != 2 || s[0].ID() != `"stray"` || s[1].ID() != `"raw"` {
		t.Errorf("strays %v", s)
	}
	if _, err := c.Do("plain", `{}`); err != nil {
		t.Errorf("Do: %v", err)
	}
	inW.Close()
	<-c.EOF()
}

package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRESTCallStrict: POST /mcp/call reads its body as /mcp reads a
// message: a Content-Type other than JSON is 415, anything after the JSON
// value and a member given twice are 400, and none of them calls a tool
// (tb.crash, named in each, would end the backend, which restarts never).
func TestRESTCallStrict(t *testing.T) {
	t.Parallel()
	gw, _ := newGateway(t, nil, testServer("tb"))
	srv := httptest.NewServer(http.HandlerFunc(gw.serveCall))
	defer srv.Close()
	post := func(ctype, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var r struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%s: a reply that is not JSON: %q", body, raw)
		}
		return resp.StatusCode, r.Error.Code, r.Error.Message
	}
	crash := `{"name":"tb.crash","arguments":{}}`
	cases := []struct {
		ctype, body string
		status      int
		code, msg   string
	}{
		{"text/plain", crash, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json"},
		{"", crash, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json"},
		{"application/x-www-form-urlencoded", crash, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json"}, // curl -d
		{"application/json", crash + ` garbage`, 400, "VALIDATION_ERROR", "after top-level value"},
		{"application/json", crash + crash, 400, "VALIDATION_ERROR", "after top-level value"},
		{"application/json", `{"name":"tb.echo","name":"tb.crash","arguments":{}}`, 400, "VALIDATION_ERROR", `member "name" is given more than once`},
		{"application/json", `{"name":"tb.echo","Name":"tb.crash","arguments":{}}`, 400, "VALIDATION_ERROR", `member "Name" differs from "name" only in case`},
		{"application/json", `{"name":"tb.crash","arguments":{},"argumentſ":{"code":0}}`, 400, "VALIDATION_ERROR", `member "argumentſ" differs from "arguments" only in case`},
		{"application/json", `{"name":"tb.crash","arguments":{"code":3,"Code":0}}`, 400, "VALIDATION_ERROR", `member "Code" in arguments differs from "code" only in case`},
		{"application/json", `{"Name":"tb.crash","arguments":{}}`, 400, "VALIDATION_ERROR", `member "Name" differs from "name" only in case`},
		{"application/json", `{"server":"tb","toolName":"echo","toolName":"crash"}`, 400, "VALIDATION_ERROR", "more than once"},
		{"application/json", `["tb.crash"]`, 400, "VALIDATION_ERROR", "one JSON object"},
	}
	for _, c := range cases {
		status, code, msg := post(c.ctype, c.body)
		if status != c.status || code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%q %s: %d %s %q, want %d %s with %q", c.ctype, c.body, status, code, msg, c.status, c.code, c.msg)
		}
	}
	if status, code, msg := post("application/json; charset=utf-8", `{"name":"tb.echo","arguments":{"a":1}} `+"\n"); status != 200 {
		t.Errorf("a well-formed call after the refused ones: %d %s %q (was tb.crash called?)", status, code, msg)
	}
}

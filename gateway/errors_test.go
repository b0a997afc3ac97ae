package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
)

func TestRPCError(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		debug    bool
		wantCode int64
		wantMsg  string
		wantData string
	}{
		{"not found", &notFoundError{kindTool, "x.y"}, false, -32602, "Tool not found: x.y", ""},
		{"not running", &backends.ServerError{Server: "x", State: backends.Failed, Reason: "exec: no such file"}, false,
			-32000, "MCP server 'x' is not running", `{"reason":"exec: no such file","server":"x","state":"failed","stderr_tail":[]}`},
		{"crashed", fmt.Errorf("call: %w", &backends.ServerError{Server: "x", State: backends.Crashed, Reason: "exit status 3", StderrTail: []string{"boom"}}), false,
			-32000, "MCP server 'x' crashed: exit status 3", `{"reason":"exit status 3","server":"x","state":"crashed","stderr_tail":["boom"]}`},
		{"timeout", &backends.TimeoutError{Server: "x", Method: "tools/call", Name: "y", Timeout: 30 * time.Second}, false,
			-32001, "Tool 'x.y' timed out after 30s", `{"reason":"timeout","server":"x","timeout_ms":30000,"tool":"x.y"}`},
		{"backend error object", &backends.RPCError{Server: "x", Code: -32602, Message: "bad path", Data: json.RawMessage(`{"field":"path","n":12345678901234567890}`)}, false,
			-32602, "bad path", `{"server":"x","field":"path","n":12345678901234567890}`},
		{"backend error no data", &backends.RPCError{Server: "x", Code: 7, Message: "m"}, false, 7, "m", `{"server":"x"}`},
		{"backend error array data", &backends.RPCError{Server: "x", Code: 7, Message: "m", Data: json.RawMessage(`[1]`)}, false, 7, "m", `{"server":"x","data":[1]}`},
		{"bad query", &answer.ArgumentError{Reason: "query is required"}, false, -32602, "query is required", `{"reason":"query is required"}`},
		{"answer failed", &answer.APIError{Message: "Rate limit", Status: 429, Type: "rate_limit", Code: "rl", Name: "APIError"}, false,
			-32001, "answer failed", `{"message":"Rate limit"}`},
		{"answer failed debug", &answer.APIError{Message: "Rate limit", Status: 429, Type: "rate_limit", Code: "rl", Name: "APIError"}, true,
			-32001, "answer failed", `{"code":"rl","message":"Rate limit","name":"APIError","status":429,"type":"rate_limit"}`},
		{"other", errors.New("boom"), false, -32603, "boom", ""},
		{"prompt not found", &notFoundError{kindPrompt, "x.y"}, false, -32602, "Prompt not found: x.y", ""},
		{"no caller credential", fmt.Errorf("call: %w", &backends.CallerError{Server: "x", Reason: "this request has none"}), false,
			-32003, "server x is reached with each caller's own credential (upstream_auth), and this request has none", `{"reason":"no_credential","server":"x"}`},
		{"sign in first", &backends.SignInError{Server: "x", Subject: "a@i", URL: "https://gw.example/signin/x"}, false,
			-32003, "server x needs you to sign in to it first: open https://gw.example/signin/x", `{"reason":"sign_in","server":"x","url":"https://gw.example/signin/x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rpcError(tt.err, kindTool, "x.y", tt.debug)
			if got.Code != tt.wantCode || got.Message != tt.wantMsg || string(got.Data) != tt.wantData {
				t.Errorf("rpcError = {%d %q %s}, want {%d %q %s}", got.Code, got.Message, got.Data, tt.wantCode, tt.wantMsg, tt.wantData)
			}
		})
	}
}

func TestRPCErrorNamesWhatTimedOut(t *testing.T) {
	err := &backends.TimeoutError{Server: "x", Method: "prompts/get", Name: "greet", Timeout: 2 * time.Second}
	got := rpcError(err, kindPrompt, "x.greet", false)
	if got.Message != "Prompt 'x.greet' timed out after 2s" || string(got.Data) != `{"prompt":"x.greet","reason":"timeout","server":"x","timeout_ms":2000}` {
		t.Errorf("prompt timeout = %q %s", got.Message, got.Data)
	}
}

// A handler returns a Go error that says what it called (called); the
// answer path, which knows neither, maps it as the handler would have.
func TestRPCErrorOfCalled(t *testing.T) {
	timeout := &backends.TimeoutError{Server: "x", Method: "prompts/get", Name: "greet", Timeout: 2 * time.Second}
	got := rpcError(called(kindPrompt, "x.greet", timeout), "", "", false)
	if got.Message != "Prompt 'x.greet' timed out after 2s" || string(got.Data) != `{"prompt":"x.greet","reason":"timeout","server":"x","timeout_ms":2000}` {
		t.Errorf("prompt timeout = %q %s", got.Message, got.Data)
	}
	got = rpcError(called(kindResource, "ui://a", &backends.NotListedError{}), "", "", false)
	if got.Message != "Resource not found: ui://a" {
		t.Errorf("resource not listed = %q", got.Message)
	}
	plain := errors.New("boom")
	if got := rpcError(called(kindPrompt, "p", plain), "", "", false); got.Message != "boom" {
		t.Errorf("message = %q, want the error's own", got.Message)
	}
	if called(kindPrompt, "p", nil) != nil {
		t.Error("called(nil) is not nil")
	}
}

// go-sdk's messages for params it could not decode (taken from go-sdk
// v1.8.0) become reasons in JSON's terms.
func TestParamsError(t *testing.T) {
	for msg, want := range map[string]string{
		`handling 'tools/list': invalid params: unmarshaling "{\"cursor\":5}" into a *mcp.ListToolsParams: json: cannot unmarshal "5}" into Go struct field mcp.ListToolsParams.cursor of type string`:                    "cursor must be a string",
		`handling 'ping': invalid params: unmarshaling "[1]" into a *mcp.PingParams: json: cannot unmarshal "[1]" into Go value of type mcp.PingParams`:                                                                   "params must be an object",
		`handling 'tools/list': invalid params: unmarshaling "{\"_meta\":[1]}" into a *mcp.ListToolsParams: json: cannot unmarshal "[1]}" into Go struct field mcp.ListToolsParams._meta of type map[string]interface {}`: "_meta must be an object",
		`handling 'x': invalid params: unmarshaling "{\"level\":5}" into a *mcp.SetLoggingLevelParams: json: cannot unmarshal "5}" into Go struct field mcp.SetLoggingLevelParams.level of type mcp.LoggingLevel`:         "level cannot be a number",
		`handling 'x': invalid params: unmarshaling "[[[[" into a *mcp.PingParams: json: exceeded maximum nesting depth of 1000`:                                                                                          "params nest too deeply",
		`handling 'x': invalid params: unmarshaling "{\"a\":\" into a *mcp.Fake: \"}" into a *mcp.PingParams: json: something else`:                                                                                       "params do not match the method's schema",
	} {
		e, ok := paramsError(msg)
		if !ok || e.Code != -32602 || e.Message != want {
			t.Errorf("paramsError(%s) = %v, %v; want %q", msg, e, ok, want)
		}
	}
	if _, ok := paramsError("handling 'x': invalid params: ElicitationID cannot be empty"); ok {
		t.Error("a message without a decoding error was rewritten")
	}
}

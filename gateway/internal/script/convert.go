package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// settlement is how the promise of a tool call settles, as the prelude's
// settle takes it.
type settlement struct {
	ok      bool
	value   string // ok: the value's JSON
	message string // !ok: the Error's message
	code    int64  // !ok: the JSON-RPC error code, when hasCode
	hasCode bool
	result  string // !ok: the CallToolResult JSON of an isError result, or ""
}

// toolResult is the part of a CallToolResult the conversion reads. Its
// members are read by their exact names, as JSON.parse and the MCP SDKs read
// them, not without case as encoding/json reads a struct: a result with
// "IsError" is not an error to a client, nor to the script.
type toolResult struct {
	content           []contentItem
	structuredContent json.RawMessage
	isError           bool
}

type contentItem struct {
	typ, text string
}

// parseResult reads raw as a CallToolResult; a repeated member counts once,
// the last, as in JSON.parse.
func parseResult(raw json.RawMessage) (toolResult, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return toolResult{}, err
	}
	var tr toolResult
	if v, ok := members["content"]; ok {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return toolResult{}, fmt.Errorf("content: %w", err)
		}
		for _, it := range items {
			var c contentItem
			// A member that is not a string reads as "": not text.
			_ = json.Unmarshal(it["type"], &c.typ)
			_ = json.Unmarshal(it["text"], &c.text)
			tr.content = append(tr.content, c)
		}
	}
	tr.structuredContent = members["structuredContent"]
	tr.isError = string(members["isError"]) == "true"
	return tr, nil
}

// convert turns a tool call's result or error into what the script sees: the
// structuredContent when there is one, else the text when the content is all
// text (several items joined by newlines), else the whole result; a result
// with isError, or an error, rejects with an Error.
func convert(raw json.RawMessage, err error) settlement {
	if err != nil {
		s := settlement{message: err.Error()}
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			s.message, s.code, s.hasCode = we.Message, we.Code, true
		}
		return s
	}
	tr, err := parseResult(raw)
	if err != nil {
		return settlement{message: "the tool returned a result that is not a CallToolResult: " + err.Error()}
	}
	text, allText := texts(tr)
	if tr.isError {
		msg := errorText(tr)
		if msg == "" {
			msg = "the tool reported an error"
		}
		return settlement{message: msg, result: string(raw)}
	}
	if len(tr.structuredContent) > 0 && string(tr.structuredContent) != "null" {
		return settlement{ok: true, value: string(tr.structuredContent)}
	}
	if allText {
		js, _ := json.Marshal(text) // a string always marshals
		return settlement{ok: true, value: string(js)}
	}
	return settlement{ok: true, value: string(raw)}
}

// texts returns the text items of tr's content joined by newlines, and
// whether the content has items and all of them are text.
func texts(tr toolResult) (string, bool) {
	if len(tr.content) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(tr.content))
	for _, c := range tr.content {
		if c.typ != "text" {
			return "", false
		}
		parts = append(parts, c.text)
	}
	return strings.Join(parts, "\n"), true
}

// errorText returns the text items of an isError result's content joined by
// newlines, skipping the others.
func errorText(tr toolResult) string {
	var parts []string
	for _, c := range tr.content {
		if c.typ == "text" {
			parts = append(parts, c.text)
		}
	}
	return strings.Join(parts, "\n")
}

package script

import (
	"encoding/json"
	"errors"
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

// toolResult is the part of a CallToolResult the conversion reads.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
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
	var tr toolResult
	if err := json.Unmarshal(raw, &tr); err != nil {
		return settlement{message: "the tool returned a result that is not a CallToolResult: " + err.Error()}
	}
	text, allText := texts(tr)
	if tr.IsError {
		msg := errorText(tr)
		if msg == "" {
			msg = "the tool reported an error"
		}
		return settlement{message: msg, result: string(raw)}
	}
	if len(tr.StructuredContent) > 0 && string(tr.StructuredContent) != "null" {
		return settlement{ok: true, value: string(tr.StructuredContent)}
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
	if len(tr.Content) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(tr.Content))
	for _, c := range tr.Content {
		if c.Type != "text" {
			return "", false
		}
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), true
}

// errorText returns the text items of an isError result's content joined by
// newlines, skipping the others.
func errorText(tr toolResult) string {
	var parts []string
	for _, c := range tr.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Fulfill asks each input request, retries with the answers and the
// backend's requestState (none when it gave none), round after round,
// and stops at a result without resultType input_required.
func TestFulfill(t *testing.T) {
	t.Parallel()
	rounds := []string{
		`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"ok?"}},"b":{"method":"roots/list"}},"requestState":"s1"}`,
		`{"resultType":"input_required","inputRequests":{"c":{"method":"elicitation/create","params":{"message":"sure?"}}}}`,
		`{"content":[],"note":"input_required"}`,
	}
	var asked, extras []string
	ask := func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method+" "+string(params))
		return json.RawMessage(`{"n":` + fmt.Sprint(len(asked)) + `}`), nil
	}
	i := 0
	retry := func(_ context.Context, extra json.RawMessage) (json.RawMessage, error) {
		extras = append(extras, string(extra))
		i++
		return json.RawMessage(rounds[i]), nil
	}
	res, err := backends.Fulfill(context.Background(), json.RawMessage(rounds[0]), ask, retry)
	if err != nil || string(res) != rounds[2] {
		t.Fatalf("Fulfill = %s, %v", res, err)
	}
	if want := []string{`elicitation/create {"message":"ok?"}`, "roots/list ", `elicitation/create {"message":"sure?"}`}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if want := []string{`{"inputResponses":{"a":{"n":1},"b":{"n":2}},"requestState":"s1"}`, `{"inputResponses":{"c":{"n":3}}}`}; !slices.Equal(extras, want) {
		t.Errorf("retries with %q, want %q", extras, want)
	}
	if backends.InputRequired(json.RawMessage(rounds[2])) || !backends.InputRequired(json.RawMessage(rounds[1])) {
		t.Error("InputRequired reads resultType, not the text")
	}

	// A server that never stops asking, a client that cannot be asked,
	// and an answer that fails.
	again := json.RawMessage(rounds[1])
	_, err = backends.Fulfill(context.Background(), again, ask, func(context.Context, json.RawMessage) (json.RawMessage, error) { return again, nil })
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, fmt.Sprintf("more than %d times", backends.MaxInputRounds)) {
		t.Errorf("endless rounds: %v", err)
	}
	if _, err = backends.Fulfill(context.Background(), again, nil, nil); !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError {
		t.Errorf("no asker: %v", err)
	}
	refused := errors.New("refused")
	fail := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, refused }
	if _, err = backends.Fulfill(context.Background(), again, fail, nil); !errors.Is(err, refused) {
		t.Errorf("a failed answer: %v", err)
	}
}

package answertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
)

func client(srv *answertest.Server) responses.ResponseService {
	return responses.NewResponseService(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(srv.Client()),
		option.WithMaxRetries(0),
	)
}

func params() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "gpt-5.5",
		Instructions: param.NewOpt("be brief"),
		Input:        responses.ResponseNewParamsInputUnion{OfString: param.NewOpt("hi")},
	}
}

// The replies decode with openai-go's own types, as the real API's do.
func TestWireFormat(t *testing.T) {
	srv := answertest.New(answertest.Respond("gpt-5.5-2026-01-01",
		answertest.Reasoning("looked it up"),
		answertest.WebSearchCall("tokyo weather", answertest.URLSource("https://www.jma.go.jp/"), answertest.APISource("oai-weather")),
		answertest.Message("Sunny.", answertest.URLCitation("https://www.jma.go.jp/", "JMA")),
	))
	defer srv.Close()
	svc := client(srv)
	resp, err := svc.New(context.Background(), params())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "gpt-5.5-2026-01-01" || resp.Object != "response" || resp.Status != responses.ResponseStatusCompleted ||
		resp.OutputText() != "Sunny." || resp.Usage.TotalTokens == 0 || resp.Instructions.OfString != "be brief" {
		t.Errorf("response = %s", resp.RawJSON())
	}
	if len(resp.Output) != 3 {
		t.Fatalf("output = %d items", len(resp.Output))
	}
	if r := resp.Output[0].AsReasoning(); r.Summary[0].Text != "looked it up" {
		t.Errorf("reasoning = %+v", r)
	}
	ws := resp.Output[1].AsWebSearchCall()
	search := ws.Action.AsSearch()
	if ws.Status != "completed" || !strings.Contains(ws.RawJSON(), `"query":"tokyo weather"`) || len(search.Sources) != 2 ||
		search.Sources[0].URL != "https://www.jma.go.jp/" || search.Sources[1].Type != "api" {
		t.Errorf("web_search_call = %s", ws.RawJSON())
	}
	msg := resp.Output[2].AsMessage()
	ann := msg.Content[0].Annotations[0]
	if ann.Type != "url_citation" || ann.AsURLCitation().URL != "https://www.jma.go.jp/" || ann.AsURLCitation().Title != "JMA" || ann.AsURLCitation().EndIndex != 6 {
		t.Errorf("annotation = %s", ann.RawJSON())
	}
	if srv.Count() != 1 {
		t.Errorf("count = %d", srv.Count())
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/responses" || r.Body["model"] != "gpt-5.5" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("recorded %s %v %v", r.Path, r.Body, r.Header)
	}
}

func TestErrors(t *testing.T) {
	srv := answertest.New(answertest.RateLimited(0))
	defer srv.Close()
	svc := client(srv)
	_, err := svc.New(context.Background(), params())
	var apiErr *responses.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" ||
		apiErr.Message == "" || apiErr.Response.Header.Get("Retry-After") != "0" {
		t.Errorf("err = %v", err)
	}
	// The script is exhausted: 500 naming the request.
	_, err = svc.New(context.Background(), params())
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Code != "answertest_script_exhausted" {
		t.Errorf("err = %v", err)
	}
	if srv.Count() != 2 {
		t.Errorf("count = %d", srv.Count())
	}
}

func TestSlowCancelled(t *testing.T) {
	srv := answertest.New(answertest.Slow(10*time.Second, answertest.Respond("m")))
	defer srv.Close()
	svc := client(srv)
	// Cancel once the request has arrived: a fixed deadline could expire
	// before it does on a loaded machine.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		srv.WaitRequests(1, 5*time.Second)
		cancel()
	}()
	if _, err := svc.New(ctx, params()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if !srv.WaitCanceled(5*time.Second) || srv.Canceled() != 1 {
		t.Error("cancellation not seen")
	}
}

func TestHandleFunc(t *testing.T) {
	srv := answertest.New()
	defer srv.Close()
	srv.HandleFunc(func(n int, r *answertest.Request) answertest.Reply {
		if n == 0 {
			return answertest.Error(http.StatusBadRequest, "invalid_request_error", "", "no")
		}
		return answertest.Respond("m", answertest.Message("second"))
	})
	svc := client(srv)
	if _, err := svc.New(context.Background(), params()); err == nil {
		t.Error("first call succeeded")
	}
	resp, err := svc.New(context.Background(), params())
	if err != nil || resp.OutputText() != "second" {
		t.Errorf("second call: %v", err)
	}
}

// A streamed reply decodes with openai-go's streaming reader, as the real
// API's stream does: every event in order, and the completed response.
func TestStreamWireFormat(t *testing.T) {
	srv := answertest.New(answertest.Stream("gpt-5.5-2026-01-01",
		answertest.FunctionCall("call_1", "mcp__gateway", "gateway__find_tools", `{"query":"screenshot"}`),
		answertest.Message("Done."),
	))
	defer srv.Close()
	svc := client(srv)
	stream := svc.NewStreaming(context.Background(), params())
	var types []string
	var done []responses.ResponseOutputItemUnion
	var completed responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_item.done":
			done = append(done, ev.Item)
		case "response.completed":
			completed = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "[response.created response.output_item.added response.output_item.done response.output_item.added response.output_item.done response.completed]"
	if fmt.Sprint(types) != want {
		t.Errorf("events = %v, want %s", types, want)
	}
	if len(done) != 2 || done[0].AsFunctionCall().Name != "gateway__find_tools" || done[0].AsFunctionCall().CallID != "call_1" ||
		done[0].AsFunctionCall().Arguments != `{"query":"screenshot"}` || !strings.Contains(done[0].RawJSON(), `"namespace":"mcp__gateway"`) {
		t.Errorf("items = %+v", done)
	}
	if completed.Status != responses.ResponseStatusCompleted || completed.OutputText() != "Done." || len(completed.Output) != 2 {
		t.Errorf("completed = %s", completed.RawJSON())
	}
}

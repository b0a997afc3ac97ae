package main

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/answer/answertest"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestModelAnswerMovesAllThree: MODEL_ANSWER alone sets the model of
// answer, answer_detailed and answer_quick; the built-in profiles of the
// latter two only change effort and verbosity; --show-config says where
// each profile field came from.
func TestModelAnswerMovesAllThree(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		answertest.Respond("m", answertest.Message("one")),
		answertest.Respond("m", answertest.Message("two")),
		answertest.Respond("m", answertest.Message("three")),
	)
	s := startAnswerGateway(t, srv, answerOpts{env: []string{"MODEL_ANSWER=gpt-5-test"}})
	want := map[string][2]string{ // tool → effort, verbosity
		"answer":          {"medium", "medium"},
		"answer_detailed": {"high", "medium"},
		"answer_quick":    {"low", "low"},
	}
	for i, tool := range []string{"answer", "answer_detailed", "answer_quick"} {
		if r := s.call(10+i, tool, queryArgs("q")); r["result"] == nil {
			t.Fatalf("%s: %v", tool, r)
		}
		body := fakeBody(t, srv, i)
		if body["model"] != "gpt-5-test" {
			t.Errorf("%s: model %v, want gpt-5-test (MODEL_ANSWER)", tool, body["model"])
		}
		reasoning, _ := body["reasoning"].(map[string]any)
		text, _ := body["text"].(map[string]any)
		if reasoning["effort"] != want[tool][0] || text["verbosity"] != want[tool][1] {
			t.Errorf("%s: effort %v verbosity %v, want %v", tool, reasoning["effort"], text["verbosity"], want[tool])
		}
	}

	out, errOut, code := runCLIEnv(t, baseEnv(t, "MODEL_ANSWER=gpt-5-test"), "--show-config", "--config", testutil.TempFile(t, "config.yaml", "model_profiles:\n  answer_quick: { verbosity: high }\n"))
	if code != 0 {
		t.Fatalf("--show-config: %d\n%s", code, errOut)
	}
	for _, line := range []string{
		`"model": "gpt-5-test (from answer: env MODEL_ANSWER)"`,
		`"reasoning_effort": "high (default)"`,
		`"verbosity": "high (`,
		`"reasoning_effort": "medium (default)"`,
	} {
		if !strings.Contains(out+errOut, line) {
			t.Errorf("--show-config lacks %s:\n%s%s", line, out, errOut)
		}
	}
}

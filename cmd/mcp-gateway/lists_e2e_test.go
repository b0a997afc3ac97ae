package main

import (
	"slices"
	"testing"
)

// The lists come in configuration order of the servers (b before a here),
// each server's items in its own order (not sorted), in one page; a
// request with a cursor is refused, since the gateway hands out none.
func TestListsInBackendOrderOnePage(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("b", "-prompts"), tb("a", "-prompts", "-extra-tools", "3")), "e2e")
	got := s.toolsList()
	want := append(prefixed("b", ".", tbTools...), prefixed("a", ".", append(slices.Clone(tbTools), "extra_000", "extra_001", "extra_002")...)...)
	if !slices.Equal(got, want) {
		t.Errorf("tools/list order:\n got %v\nwant %v", got, want)
	}
	if r := s.call("tools/list", `{}`).result(t); r["nextCursor"] != nil {
		t.Errorf("tools/list handed out a cursor: %v", r["nextCursor"])
	}
	prompts, _ := s.call("prompts/list", `{}`).result(t)["prompts"].([]any)
	var names []string
	for _, p := range prompts {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, []string{"b.greet", "a.greet"}) {
		t.Errorf("prompts/list: %v", names)
	}
	if code, _, _ := s.call("tools/list", `{"cursor":"c1"}`).rpcErr(t); code != -32602 {
		t.Errorf("tools/list with a cursor: code %d, want -32602", code)
	}
}

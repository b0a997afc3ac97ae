package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// The lists come in configuration order of the servers (b before a here),
// each server's items in its own order (not sorted), in one page; a
// request with a cursor is refused, since the gateway hands out none. The
// result's _meta merges the backends' (the first in configuration order
// wins a member both have).
func TestListsInBackendOrderOnePage(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("b", "-prompts", "-list-meta", `{"example.com/k":"b","example.com/b":1}`),
		tb("a", "-prompts", "-extra-tools", "3", "-list-meta", `{"example.com/k":"a","example.com/a":2}`)), "e2e")
	got := s.toolsList()
	want := append(prefixed("b", ".", tbTools...), prefixed("a", ".", append(slices.Clone(tbTools), "extra_000", "extra_001", "extra_002")...)...)
	if !slices.Equal(got, want) {
		t.Errorf("tools/list order:\n got %v\nwant %v", got, want)
	}
	r := s.Call("tools/list", `{}`).Result(t)
	if r["nextCursor"] != nil {
		t.Errorf("tools/list handed out a cursor: %v", r["nextCursor"])
	}
	if got := canonical(json.RawMessage(mustJSON(t, r["_meta"]))); got != `{"example.com/a":2,"example.com/b":1,"example.com/k":"b"}` {
		t.Errorf("tools/list _meta: %s", got)
	}
	prompts, _ := s.Call("prompts/list", `{}`).Result(t)["prompts"].([]any)
	var names []string
	for _, p := range prompts {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, []string{"b.greet", "a.greet"}) {
		t.Errorf("prompts/list: %v", names)
	}
	if code, _, _ := s.Call("tools/list", `{"cursor":"c1"}`).Error(t); code != -32602 {
		t.Errorf("tools/list with a cursor: code %d, want -32602", code)
	}
}

// resources/read answers as the backend wrote it (its unknown member kept), for
// a listed URI and for one a listed template matches.
func TestResourceReadRaw(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("plain"), tb("res", "-resources")), "e2e")
	for _, uri := range []string{"test://r1", "test://t/7"} {
		if got := string(s.Call("resources/read", `{"uri":"`+uri+`"}`).Member("result")); got != `{"contents":[{"uri":"test://r1","text":"r1 body","x-unknown":[1]}]}` {
			t.Errorf("resources/read %s: %s", uri, got)
		}
	}
}

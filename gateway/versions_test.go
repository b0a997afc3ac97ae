package gateway

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestDropNewerFields(t *testing.T) {
	for in, want := range map[string]string{
		`{"tools":[{"name":"a","ttlMs":1}],"ttlMs":0,"cacheScope":"public","nextCursor":"c"}`: `{"tools":[{"name":"a","ttlMs":1}],"nextCursor":"c"}`,
		`{"contents":[]}`:                   `{"contents":[]}`,
		`{"cacheScope":"public","ttlMs":5}`: `{}`,
		`{"a\u0022":1,"ttlMs":0}`:           `{"a\"":1}`,
	} {
		if got := string(dropNewerFields(json.RawMessage(in))); got != want {
			t.Errorf("dropNewerFields(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestServedVersions(t *testing.T) {
	v := servedVersions()
	if len(v) == 0 || slices.ContainsFunc(v, func(s string) bool { return s >= firstUnserved }) || !slices.Contains(v, "2025-11-25") {
		t.Errorf("servedVersions() = %v", v)
	}
}

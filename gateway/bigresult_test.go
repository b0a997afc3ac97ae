package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// A large result is written in one go, compacted, whether it fits in
// ResultParts's parts (one long text) or not (a pretty-printed result with
// more runs between whitespace than maxResultParts).
func TestWriteLargeResult(t *testing.T) {
	text := `{ "content" : [ { "type" : "text", "text" : "` + strings.Repeat("x y ", bigResult/4) + `" } ] }`
	items := make([]string, 4*maxResultParts)
	for i := range items {
		items[i] = `"` + strings.Repeat("z", bigResult/len(items)) + `"`
	}
	pretty := "{ \"content\" : [\n  " + strings.Join(items, " ,\n  ") + "\n] }"
	for name, result := range map[string]string{"one text": text, "pretty": pretty} {
		s, rs := testSession(t)
		id := json.RawMessage(`"req-1"`)
		if err := s.writeResult(id, json.RawMessage(result), true); err != nil {
			t.Fatal(err)
		}
		got := <-rs.wrote
		if want := wire.AppendResult(nil, id, json.RawMessage(result)); !bytes.Equal(got, want) {
			t.Errorf("%s: wrote %d bytes %.100q..., want %d bytes %.100q...", name, len(got), got, len(want), want)
		}
	}
}

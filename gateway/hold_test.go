package gateway

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A held call keeps the progress its backend makes while no client
// request stands for it (between the answer input_required and the
// retry) for the retry: the first heldProgress in order, then the latest
// in place of the last, so that a backend's flood while the client is
// away holds bounded memory. (The retry getting it first, under its own
// token: wire script stateless-held-progress.)
func TestHeldProgressKeptBounded(t *testing.T) {
	h := &hold{}
	const sent = heldProgress + 10
	for i := 1; i <= sent; i++ {
		h.progress(&mcp.ProgressNotificationParams{Progress: float64(i)})
	}
	var got, want []float64
	for _, p := range h.pending {
		got = append(got, p.Progress)
	}
	for i := 1; i < heldProgress; i++ {
		want = append(want, float64(i))
	}
	want = append(want, sent)
	if !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

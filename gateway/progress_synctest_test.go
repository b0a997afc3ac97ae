package gateway

import (
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call of the gateway's own reports progress every interval (5 s by
// default) with the elapsed time and the latest step, under the client's
// token, and nothing once it has stopped; without a token it reports
// nothing. The clock is synctest's.
func TestProgressEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &front{g: &Gateway{}, log: slog.New(slog.DiscardHandler)}
		var mu sync.Mutex
		var got []string
		notify := func(p *mcp.ProgressNotificationParams) {
			if string(p.ProgressToken.(json.RawMessage)) != `"tok"` {
				t.Errorf("token %v", p.ProgressToken)
			}
			mu.Lock()
			got = append(got, p.Message)
			mu.Unlock()
		}
		sent := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(got)
		}
		step, stop := f.startProgress(toolCall{meta: json.RawMessage(`{"progressToken":"tok"}`)}, notify)
		time.Sleep(5*time.Second - time.Millisecond)
		synctest.Wait()
		if got := sent(); len(got) != 0 {
			t.Errorf("progress before the interval: %q", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		step("asking the model")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		stop()
		time.Sleep(time.Minute)
		want := []string{"5s elapsed; starting", "10s elapsed; asking the model"}
		if got := sent(); !slices.Equal(got, want) {
			t.Errorf("progress %q, want %q", got, want)
		}

		step, stop = f.startProgress(toolCall{}, notify)
		if step != nil {
			t.Error("a step function without a progress token")
		}
		stop()
	})
}

package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRunToolResultNearMemoryLimit checks that a tool result that leaves the
// VM's heap all but full ends the run at the memory limit. The engine drops
// the job that resumes the script when it cannot allocate it, so such a
// result, a success or an isError, used to leave the script waiting for ever
// and the run reported as never settling.
func TestRunToolResultNearMemoryLimit(t *testing.T) {
	for _, n := range []int{2_500_000, 3_000_000, 3_500_000, 4_000_000} {
		for _, isError := range []bool{false, true} {
			big := textResult(strings.Repeat("x", n))
			if isError {
				big = json.RawMessage(strings.Replace(string(big), `{`, `{"isError":true,`, 1))
			}
			call := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return big, nil }
			t.Run(fmt.Sprintf("%d-isError-%v", n, isError), func(t *testing.T) {
				_, err := Run(context.Background(), `try { return (await tools.x()).length } catch (e) { return "caught" }`,
					Options{Call: call, Limits: Limits{Memory: 8 << 20}})
				var le *LimitError
				if err != nil && !(errors.As(err, &le) && le.Limit == "memory") {
					t.Errorf("Run = %v, want a result or the memory limit", err)
				}
			})
		}
	}
}

package script

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzRun runs arbitrary scripts under small limits: Run must return, with a
// result that is JSON within the output limit or with a LimitError or a
// ScriptError, and never panic. The seed corpus is testdata/scripts.
func FuzzRun(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "scripts", "*.js"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed scripts in testdata/scripts: %v", err)
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	call := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		switch {
		case strings.HasPrefix(name, "fail"):
			return json.RawMessage(`{"content":[{"type":"text","text":"failed"}],"isError":true}`), nil
		case strings.HasPrefix(name, "err"):
			return nil, errors.New("refused")
		case strings.HasPrefix(name, "slow"):
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return echo(ctx, name, args)
	}
	lim := Limits{Wall: 200 * time.Millisecond, Memory: 8 << 20, Calls: 5, Output: 1 << 10, Parallel: 2}
	f.Fuzz(func(t *testing.T, src string) {
		res, err := Run(context.Background(), src, Options{Call: call, Limits: lim})
		var le *LimitError
		var se *ScriptError
		switch {
		case err == nil:
			if !json.Valid(res.Value) {
				t.Errorf("Run(%q) returned %q, not JSON", src, res.Value)
			}
			n := len(res.Value)
			for _, l := range res.Logs {
				n += len(l)
			}
			if n > lim.Output {
				t.Errorf("Run(%q) returned %d bytes, over the output limit", src, n)
			}
		case errors.As(err, &le), errors.As(err, &se):
		default:
			t.Errorf("Run(%q) = %v, want a result, a LimitError or a ScriptError", src, err)
		}
		if res.Calls > lim.Calls {
			t.Errorf("Run(%q) started %d calls, over the limit", src, res.Calls)
		}
	})
}

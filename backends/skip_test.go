package backends_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// With Options.Self, an entry that runs this gateway on its own
// configuration is Skipped and never started; the others start.
func TestSelfSkipped(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	self := config.Self{Executable: testbackend, Config: cfg, Dir: t.TempDir()}
	loop := srv("loop", "-pid-dir", pids, "--config", cfg) // would fail on --config if started
	e := start(t, []config.Server{loop, srv("tb", "-pid-dir", pids)}, func(o *backends.Options) { o.Self = &self })
	e.Wait(context.Background(), 0)
	if st := e.status(t, "loop"); st.State != backends.Skipped || st.PID != 0 || !strings.Contains(st.Error, "runs this mcp-gateway again on "+cfg) {
		t.Errorf("loop: %+v", st)
	}
	if st := e.status(t, "tb"); st.State != backends.Ready {
		t.Errorf("tb: %+v", st)
	}
	if n, _ := os.ReadDir(pids); len(n) != 1 {
		t.Errorf("%d processes started, want 1", len(n))
	}
	var se *backends.ServerError
	if _, err := e.CallTool(context.Background(), "loop", "echo", nil, backends.CallOptions{}); !errors.As(err, &se) || se.State != backends.Skipped {
		t.Errorf("call to a skipped server: %v", err)
	}
}

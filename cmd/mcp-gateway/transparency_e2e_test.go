package main

// The transparency suite: the official TypeScript SDK clients (v1,
// @modelcontextprotocol/sdk; v2, @modelcontextprotocol/client in
// versionNegotiation "auto" mode) run the same probes of every MCP feature
// (testdata/transparency.mjs) against server-everything directly and
// through the gateway, and the results are compared feature by feature.
// Every difference is either a failure or listed in knownDifferences with
// its reason, which docs/transparency.md explains.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// knownDifferences are the features the gateway does not yet pass through
// as server-everything serves them directly, each with why; see
// docs/transparency.md. A feature listed here that turns out identical
// fails the test, so the list stays true.
var knownDifferences = map[string]string{}

// eraDifferences are what differs because the v2 client speaks 2026-07-28
// with the gateway and 2025-11-25 with server-everything: the feature
// does not exist, or is an extension, in one era. docs/transparency.md
// lists them.
var eraDifferences = map[string]string{
	"capabilities":     "tasks is an extension in 2026-07-28: the client leaves the capability out",
	"tool definitions": "tasks is an extension in 2026-07-28: the client leaves a tool's execution out",
	"logging/setLevel": "2026-07-28 removed logging/setLevel (the level goes in each request's _meta)",
}

// transparencyRun runs transparency.mjs with sdk ("v1" or "v2") against
// command and returns its features.
func transparencyRun(t *testing.T, sdk, prefix, command string, args ...string) map[string]json.RawMessage {
	t.Helper()
	plan, _ := json.Marshal(map[string]any{"sdk": sdk, "command": command, "args": args, "env": baseEnvMap(t), "prefix": prefix})
	planPath := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planPath, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testdataPath("transparency.mjs"), planPath)
	var stderr testutil.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("transparency.mjs %s %s: %v\nstdout: %s\nstderr: %s", sdk, command, err, out, stderr.String())
	}
	var res struct {
		Features map[string]json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("transparency.mjs output: %v\n%s", err, out)
	}
	return res.Features
}

// eraNeutral is a feature's value without what only a result of
// 2026-07-28 carries: the server's identity in _meta (an empty _meta left
// by that goes too) and cache hints.
func eraNeutral(v json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return v
	}
	var meta map[string]json.RawMessage
	if _, ok := m["_meta"]; ok && json.Unmarshal(m["_meta"], &meta) != nil {
		return v
	}
	delete(meta, "io.modelcontextprotocol/serverInfo")
	if len(meta) == 0 {
		delete(m, "_meta")
	} else {
		m["_meta"], _ = json.Marshal(meta)
	}
	delete(m, "ttlMs") // cache hints: a read result of 2026-07-28 has them
	delete(m, "cacheScope")
	out, _ := json.Marshal(m)
	return out
}

// canonical re-encodes v with sorted keys, so that member order inside
// objects does not count as a difference (list order does).
func canonical(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// The official TypeScript clients see server-everything through the
// gateway as they see it directly, feature by feature, apart from the
// documented naming (the server's prefix) and knownDifferences. v2 in
// "auto" mode speaks 2026-07-28 with the gateway and 2025-11-25 with the
// server: its sampling, elicitation and roots cross the era boundary as
// input_required answers the gateway translates (hold.go).
func TestTransparencyTypeScriptClients(t *testing.T) {
	t.Parallel()
	root := npmPeers(t, "@modelcontextprotocol/client/package.json")
	everything := nodeServer(root, "everything", "server-everything", "stdio")
	cfg := beConfig(t, everything)
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			direct := transparencyRun(t, sdk, "", everything.Command, everything.Args...)
			through := transparencyRun(t, sdk, "everything.", gatewayBin, "--stdio", "--config", cfg)
			if len(direct) < 15 {
				t.Fatalf("only %d features probed directly: %v", len(direct), direct)
			}
			var names []string
			for name := range direct {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				if name == "protocolVersion" {
					continue // by era: below
				}
				d, g := canonical(direct[name]), canonical(eraNeutral(through[name]))
				reason, known := knownDifferences[name]
				if era, ok := eraDifferences[name]; ok && sdk == "v2" {
					reason, known = era, true
				}
				switch {
				case d == g && known:
					t.Errorf("%s: now identical through the gateway; remove it from knownDifferences and docs/transparency.md", name)
				case d != g && !known:
					t.Errorf("%s differs:\n  direct:  %s\n  gateway: %s", name, d, g)
				case d != g:
					t.Logf("%s differs (known: %s)", name, reason)
				}
				if bytes.Contains(direct[name], []byte(`"error"`)) && name != "completion/complete" {
					t.Logf("%s fails directly too: %s", name, d)
				}
			}
			// v2 in auto mode speaks 2026-07-28 with the gateway (which
			// serves it) and 2025-11-25 with server-everything directly:
			// the calls above crossed the era boundary (docs/transparency.md).
			if sdk == "v2" && (canonical(through["protocolVersion"]) != `"2026-07-28"` || canonical(direct["protocolVersion"]) != `"2025-11-25"`) {
				t.Errorf("v2 auto negotiated %s through the gateway, %s directly", through["protocolVersion"], direct["protocolVersion"])
			}
		})
	}
}

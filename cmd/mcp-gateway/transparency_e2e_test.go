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
	"strconv"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// knownDifferences are the features the gateway does not pass through as
// the server serves them directly, each with why, by "BACKEND/SDK/FEATURE"
// (a * for any backend or SDK); see docs/transparency.md. A feature listed
// here that turns out identical fails the test, so the list stays true.
var knownDifferences = map[string]string{
	"conformance/*/progress":                    "the tool answers with its call's progress token, and the gateway gives a backend tokens of its own (it routes the progress of many clients): the token differs, the progress does not",
	"conformance/v1/input_required multi_round": "directly, go-sdk's fulfilment of input_required for a client of the handshake era reinvokes the tool once and returns the second round's input_required as it is; the gateway fulfils every round (up to 10), so the call completes",
}

// eraDifferences are what differs because the client speaks another era
// with the gateway than the backend does, by "BACKEND/SDK/FEATURE": the
// feature does not exist, or is an extension, in one era.
// docs/transparency.md lists them.
var eraDifferences = map[string]string{
	"everything/v2/capabilities":           "tasks is an extension in 2026-07-28: the client leaves the capability out",
	"everything/v2/tool definitions":       "tasks is an extension in 2026-07-28: the client leaves a tool's execution out",
	"everything/v2/logging/setLevel":       "2026-07-28 removed logging/setLevel (the level goes in each request's _meta)",
	"conformance/v1/sampling (request)":    "the backend is spoken to in 2026-07-28, where a tool cannot send the client a request (go-sdk refuses it): the tool fails through the gateway for every client, as it does directly for a client of 2026-07-28",
	"conformance/v1/elicitation (request)": "the backend is spoken to in 2026-07-28, where a tool cannot send the client a request (go-sdk refuses it): the tool fails through the gateway for every client, as it does directly for a client of 2026-07-28",
}

// difference returns why feature may differ for backend and sdk, if it may.
func difference(backend, sdk, feature string) (string, bool) {
	for _, key := range []string{backend + "/" + sdk + "/" + feature, backend + "/*/" + feature, "*/" + sdk + "/" + feature, "*/*/" + feature} {
		if r, ok := knownDifferences[key]; ok {
			return r, true
		}
		if r, ok := eraDifferences[key]; ok {
			return r, true
		}
	}
	return "", false
}

// transparencyRun runs transparency.mjs with a plan (see its header) and
// returns its features.
func transparencyRun(t *testing.T, plan map[string]any) map[string]json.RawMessage {
	t.Helper()
	plan["env"] = baseEnvMap(t)
	data, _ := json.Marshal(plan)
	planPath := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testdataPath("transparency.mjs"), planPath)
	var stderr testutil.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("transparency.mjs %s: %v\nstdout: %s\nstderr: %s", data, err, out, stderr.String())
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
// 2026-07-28 carries, at any depth: a server's identity in _meta (an empty
// _meta left by that goes too) and cache hints. Either side may have them:
// through the gateway a client of 2026-07-28 gets the gateway's, and a
// server that speaks both eras may add hints for any client.
func eraNeutral(v json.RawMessage) json.RawMessage {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return v
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if meta, ok := x["_meta"].(map[string]any); ok {
				delete(meta, "io.modelcontextprotocol/serverInfo")
				if len(meta) == 0 {
					delete(x, "_meta")
				}
			}
			delete(x, "ttlMs")
			delete(x, "cacheScope")
			for _, v := range x {
				strip(v)
			}
		case []any:
			for _, v := range x {
				strip(v)
			}
		}
	}
	strip(x)
	out, _ := json.Marshal(x)
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

// The official TypeScript clients see each server through the gateway —
// over stdio and over Streamable HTTP — as they see it directly over
// stdio, feature by feature, apart from the documented naming (the
// server's prefix) and the listed differences. The servers: the npm
// server-everything, which speaks 2025-11-25, and go-sdk's conformance
// everything-server, which the gateway speaks 2026-07-28 to (pinned). The
// clients: v1, which speaks 2025-11-25, and v2 in "auto" mode, which speaks
// 2026-07-28 with the gateway. Every pairing crosses the era boundary
// somewhere: v2 with server-everything through held calls (hold.go), v1
// with the everything-server through fulfilled input_required results
// (mrtr.go).
func TestTransparencyTypeScriptClients(t *testing.T) {
	t.Parallel()
	root := npmPeers(t, "@modelcontextprotocol/client/package.json")
	everything := nodeServer(root, "everything", "server-everything", "stdio")
	conformance := testutil.MustBuild("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	type backend struct {
		direct []string // the command, run directly
		server string   // its configuration entry
		probes string
	}
	cmdJSON := func(c []string) string {
		b, _ := json.Marshal(map[string]any{"command": c[0], "args": c[1:]})
		return string(b[1 : len(b)-1])
	}
	backendsUnder := map[string]backend{
		"everything":  {append([]string{everything.Command}, everything.Args...), `{"name": "everything", ` + cmdJSON(append([]string{everything.Command}, everything.Args...)) + `}`, "everything"},
		"conformance": {[]string{conformance}, `{"name": "conformance", ` + cmdJSON([]string{conformance}) + `, "protocol": "2026-07-28"}`, "conformance"},
	}
	for _, name := range []string{"everything", "conformance"} {
		be := backendsUnder[name]
		cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000}, "servers": [`+be.server+`]}`)
		for _, sdk := range []string{"v1", "v2"} {
			t.Run(name+"/"+sdk, func(t *testing.T) {
				t.Parallel()
				direct := transparencyRun(t, map[string]any{"sdk": sdk, "probes": be.probes, "command": be.direct[0], "args": be.direct[1:]})
				if len(direct) < 15 {
					t.Fatalf("only %d features probed directly: %v", len(direct), direct)
				}
				// The probes that prove a path crosses: they must work
				// directly, or comparing them proves nothing.
				for feature, want := range map[string]string{
					"cancellation":               `"outcome":"aborted"`,
					"resources/subscribe":        `"updated":true`,
					"input_required elicitation": `"content":[{`,
					"input_required sampling":    `"content":[{`,
					"input_required list_roots":  `transparency-root`,
					"prompts/get input_required": `"messages":[{`,
					"sampling":                   `sampled answer`,
					"elicitation":                `Ada`,
				} {
					if v, ok := direct[feature]; ok && !bytes.Contains(v, []byte(want)) {
						t.Errorf("%s directly: %s, want it to hold %s", feature, v, want)
					}
				}
				g := startHTTP(t, cfg)
				for _, transport := range []string{"stdio", "http"} {
					plan := map[string]any{"sdk": sdk, "probes": be.probes, "prefix": name + "."}
					if transport == "http" {
						plan["url"] = g.base + "/mcp"
					} else {
						plan["command"], plan["args"] = gatewayBin, []string{"--stdio", "--config", cfg}
					}
					through := transparencyRun(t, plan)
					compareFeatures(t, name, sdk, transport, direct, through)
				}
			})
		}
	}
}

// TestTransparencyHeldRequests: the official TypeScript client of
// 2026-07-28 (v2 in "auto" mode) calls a tool, gets a prompt and reads a
// resource of a backend of the handshake era that asks the client for a
// sampling or an elicitation mid-request (testbackend -asks). Directly it
// speaks 2025-11-25 and answers the backend's requests; through the
// gateway, over stdio and Streamable HTTP, it speaks 2026-07-28: each
// request is held and answered input_required (hold.go), the client's
// handlers answer, its retry completes, and the results are the same.
func TestTransparencyHeldRequests(t *testing.T) {
	t.Parallel()
	npmPeers(t, "@modelcontextprotocol/client/package.json")
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "tb", "command": `+strconv.Quote(backendBin)+`, "args": ["-asks"], "protocol": "2025-11-25"}]}`)
	direct := transparencyRun(t, map[string]any{"sdk": "v2", "probes": "asks", "command": backendBin, "args": []string{"-asks"}})
	// What the backend makes of the client's answers: they must come
	// directly, or comparing proves nothing.
	for feature, want := range map[string]string{
		"tools/call sample":      `"text":"sampled answer"`,
		"prompts/get ask":        `hello Ada (accept)`,
		"resources/read sampled": `"text":"sampled answer"`,
		"asked":                  `{"sampling":2,"elicitation":1}`,
	} {
		if !bytes.Contains(direct[feature], []byte(want)) {
			t.Errorf("%s directly: %s, want it to hold %s", feature, direct[feature], want)
		}
	}
	// The gateway declares capabilities of its own (list changes,
	// completions) over testbackend's few: not what this test is about.
	delete(direct, "capabilities")
	g := startHTTP(t, cfg)
	for _, transport := range []string{"stdio", "http"} {
		plan := map[string]any{"sdk": "v2", "probes": "asks", "prefix": "tb."}
		if transport == "http" {
			plan["url"] = g.base + "/mcp"
		} else {
			plan["command"], plan["args"] = gatewayBin, []string{"--stdio", "--config", cfg}
		}
		compareFeatures(t, "asks", "v2", transport, direct, transparencyRun(t, plan))
	}
}

// compareFeatures reports each feature that differs between direct and
// through, unless listed (difference), and each listed one that does not.
func compareFeatures(t *testing.T, backend, sdk, transport string, direct, through map[string]json.RawMessage) {
	t.Helper()
	var names []string
	for name := range direct {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "protocolVersion" {
			continue // by era: below
		}
		d, g := canonical(eraNeutral(direct[name])), canonical(eraNeutral(through[name]))
		reason, known := difference(backend, sdk, name)
		switch {
		case d == g && known:
			t.Errorf("%s over %s: now identical through the gateway; remove it from the differences and docs/transparency.md", name, transport)
		case d != g && !known:
			t.Errorf("%s over %s differs:\n  direct:  %s\n  gateway: %s", name, transport, d, g)
		case d != g:
			t.Logf("%s over %s differs (known: %s)", name, transport, reason)
		}
		if bytes.Contains(direct[name], []byte(`"error"`)) && name != "completion/complete" {
			t.Logf("%s fails directly too: %s", name, d)
		}
	}
	// v2 in auto mode speaks 2026-07-28 with the gateway, whatever the
	// backend speaks.
	if sdk == "v2" && canonical(through["protocolVersion"]) != `"2026-07-28"` {
		t.Errorf("v2 auto negotiated %s through the gateway over %s (directly: %s)", through["protocolVersion"], transport, direct["protocolVersion"])
	}
}

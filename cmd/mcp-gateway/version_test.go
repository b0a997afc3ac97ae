package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0f5b689a1b2c3d4e5f60718293a4b5c6d7e8f901"
	for _, tc := range []struct {
		name, linked string
		bi           *debug.BuildInfo
		want         string
	}{
		{"linked wins", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "v1.2.3"},
		{"go install @v", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123103000-0f5b689a1b2c+dirty"}}, "v0.0.0-20261123103000-0f5b689a1b2c+dirty"},
		{"commit", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "0f5b689a1b2c"},
		{"dirty commit", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "0f5b689a1b2c-dirty"},
		{"nothing recorded", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "unknown"},
		{"no build info", "", nil, "unknown"},
	} {
		if got := versionOf(tc.linked, tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The binary built by scripts/build names a version or commit (never
// "(devel)" or "unknown") in --version, and the same string in
// serverInfo.version and in the clientInfo.version its backends see.
func TestVersionEverywhere(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, "--version")
	want, _, _ := strings.Cut(strings.TrimPrefix(stdout, "mcp-gateway "), " (go")
	if code != 0 || !strings.HasPrefix(stdout, "mcp-gateway ") || want == "" || want == "unknown" || strings.Contains(want, "devel") {
		t.Fatalf("--version: %d %q, want mcp-gateway VERSION (go...)", code, stdout)
	}
	cfg := beConfig(t, tb("tb"))
	p := startGateway(t, baseEnv(t), "--stdio", "--config", cfg)
	p.send(initMsg + "\n")
	res, _ := p.readLine()["result"].(map[string]any)
	if info, _ := res["serverInfo"].(map[string]any); info["version"] != want {
		t.Errorf("serverInfo = %v, want version %s", res["serverInfo"], want)
	}
	s := startRaw(t, cfg, "e2e")
	ci, _ := s.structured("tb.stats", `{}`)["clientInfo"].(map[string]any)
	if ci["name"] != "mcp-gateway" || ci["version"] != want {
		t.Errorf("backend saw clientInfo %v, want mcp-gateway %s", ci, want)
	}
}

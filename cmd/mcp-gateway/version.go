package main

import "runtime/debug"

// unknownVersion is the version of a binary that recorded none.
const unknownVersion = "unknown"

// buildVersion is set at link time by scripts/release
// (-ldflags "-X main.buildVersion=v1.2.3"), from git describe.
var buildVersion string

// version is the gateway's version as --version, serverInfo.version and the
// backends' clientInfo.version show it: see versionOf.
func version() string {
	bi, _ := debug.ReadBuildInfo() // nil without build information
	return versionOf(buildVersion, bi)
}

// versionOf names what a binary is, never "(devel)" alone: the version
// linked in by scripts/release; else the module version `go install
// ...@v1.2.3` records (Go also records a pseudo-version such as
// v0.0.0-20260101120000-0f5b689abcde+dirty when it stamps VCS data); else
// the commit the binary was built from, "0f5b689abcde" or
// "0f5b689abcde-dirty"; else "unknown" (built with -buildvcs=false, or
// outside a repository).
func versionOf(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi == nil {
		return unknownVersion
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return unknownVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

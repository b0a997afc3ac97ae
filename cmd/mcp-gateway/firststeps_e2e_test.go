package main

// End-to-end tests of the first steps as a new user meets them (issue 35,
// item 6): what tools, status and call say about servers that fail or take
// long to start, and how they name a tool the user mistyped.

import (
	"strings"
	"testing"
)

// npmE404 is a server that fails as `npx -y` does for a package that does
// not exist: npm's E404 text on stderr, exit 1, before reading stdin.
func npmE404(name string) beServer {
	s := tb(name, "-stderr-text", "npm error code E404", "-fail-start", "1")
	s.Restart = "never"
	return s
}

// A server whose process exits at once is reported as a process that
// exited, with its code and stderr, not as one that "ended its session
// on server/discover" (the question was not the cause).
func TestFirstStepsExitedServerReportedAsExited(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("tb"), npmE404("pkg"))
	out, errOut, _ := runCLI(t, "status", "--config", cfg)
	if strings.Contains(errOut, "ended its session") || strings.Contains(out, "ended its session") {
		t.Errorf("the exit is blamed on server/discover:\n%s", errOut)
	}
	if !strings.Contains(errOut, "its process exited") || !strings.Contains(errOut, "exit status 1") {
		t.Errorf("stderr does not say the process exited, with its code:\n%s", errOut)
	}
	if !strings.Contains(out, "npm error code E404") {
		t.Errorf("status does not show the server's stderr:\n%s", out)
	}
}

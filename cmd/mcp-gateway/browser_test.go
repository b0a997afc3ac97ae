package main

// The browser the browser tests drive, and where they leave screenshots.

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// findChromium returns a Chromium or Chrome to drive: $CHROMIUM, the
// Debian package's (scripts/test installs it), or Chrome where the OS
// keeps it. Without one the test fails, or is skipped under -short.
func findChromium(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}
	switch runtime.GOOS {
	case "darwin":
		candidates = append(candidates, "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")
	case "windows":
		candidates = append(candidates, `C:\Program Files\Google\Chrome\Application\chrome.exe`)
	}
	for _, c := range candidates {
		if c != "" {
			if _, err := os.Stat(c); err == nil {
				return c
			}
		}
	}
	missing(t, "Chromium is required for the browser tests: install the Debian package chromium (scripts/test does, as root), or set CHROMIUM to a Chromium or Chrome binary")
	return ""
}

// artifactDir is where the browser tests leave their screenshots:
// $MCP_GATEWAY_ARTIFACTS, else artifacts/ at the repository root.
func artifactDir(t *testing.T, root string) string {
	dir := os.Getenv("MCP_GATEWAY_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(root, "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

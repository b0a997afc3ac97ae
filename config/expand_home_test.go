package config

import (
	"path/filepath"
	"runtime"
	"testing"
)

// "~/" expands on every OS; "~\" only on Windows, where "\" separates paths
// (elsewhere it is a file name character).
func TestExpandHome(t *testing.T) {
	home := filepath.FromSlash("/home/me")
	tilde := filepath.Join(home, "x", "y.log")
	backslash := `~\x\y.log`
	if runtime.GOOS == "windows" {
		backslash = tilde
	}
	for _, tc := range []struct{ in, home, want string }{
		{"~", home, home},
		{"~/x/y.log", home, tilde},
		{`~\x\y.log`, home, backslash},
		{"~user/x", home, "~user/x"},
		{"/abs/~/x", home, "/abs/~/x"},
		{"~/x", "", "~/x"},
	} {
		if got := ExpandHome(tc.in, tc.home); got != tc.want {
			t.Errorf("ExpandHome(%q, %q) = %q, want %q", tc.in, tc.home, got, tc.want)
		}
	}
}

//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/npm-peers says on stderr that it installs, and that it is done:
// npm ci at --loglevel=error says nothing for the minute it takes on a
// fresh clone. Run on a copy of the script and lock file, with an npm that
// records its arguments.
func TestNpmPeersSaysItInstalls(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		missing(t, "bash runs the scripts: "+err.Error())
	}
	root, bin := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("..", "..", "scripts", "npm-peers"), filepath.Join(root, "scripts", "npm-peers"))
	copyFile(t, filepath.Join("..", "..", "package-lock.json"), filepath.Join(root, "package-lock.json"))
	if err := os.MkdirAll(filepath.Join(root, "node_modules"), 0o700); err != nil {
		t.Fatal(err)
	}
	npm := "#!/bin/sh\necho \"$@\" > \"$NPM_ARGS\"\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o700); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(t.TempDir(), "args")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "npm-peers"))
	cmd.Env = append(baseEnv(t), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NPM_ARGS="+args)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/npm-peers: %v\n%s", err, stderr.String())
	}
	if got, _ := os.ReadFile(args); !strings.HasPrefix(string(got), "ci ") {
		t.Fatalf("npm was run with %q, want ci", got)
	}
	if !strings.Contains(stderr.String(), "scripts/npm-peers: installing the npm packages package-lock.json pins (npm ci") ||
		!strings.Contains(stderr.String(), "scripts/npm-peers: installed") || stdout.Len() != 0 {
		t.Errorf("npm-peers does not say what it does, on stderr:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

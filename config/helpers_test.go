package config

import (
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// mapEnv is an environment for LoadOptions.Env.
func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// loadText loads text as config.yaml with env and flags; home is /home/me.
func loadText(t testing.TB, text string, env map[string]string, flags Flags) (*Config, *Sources, string, error) {
	t.Helper()
	p := testutil.TempFile(t, "config.yaml", text)
	c, s, err := Load(LoadOptions{Path: p, Home: "/home/me", Env: mapEnv(env), Flags: flags})
	return c, s, p, err
}

// mustLoad loads text and fails the test on error.
func mustLoad(t testing.TB, text string, env map[string]string, flags Flags) (*Config, *Sources) {
	t.Helper()
	c, s, _, err := loadText(t, text, env, flags)
	if err != nil {
		t.Fatalf("Load: %v\n--- file:\n%s", err, text)
	}
	return c, s
}

// mustFail loads text and returns its *Errors, failing the test when Load
// succeeds or returns anything but *Error values.
func mustFail(t testing.TB, text string, env map[string]string) []*Error {
	t.Helper()
	_, _, p, err := loadText(t, text, env, Flags{})
	if err == nil {
		t.Fatalf("Load succeeded; want an error\n--- file:\n%s", text)
	}
	checkOnlyErrors(t, err)
	errs := Errors(err)
	for _, e := range errs {
		if e.File != "" && e.File != p {
			t.Errorf("error names file %q, want %q", e.File, p)
		}
	}
	return errs
}

// checkOnlyErrors fails unless err is an *Error or a join of them.
func checkOnlyErrors(t testing.TB, err error) {
	t.Helper()
	if _, ok := err.(*Error); ok {
		return
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || len(j.Unwrap()) == 0 {
		t.Fatalf("error %T %q is not an *Error or a join of them", err, err)
	}
	for _, e := range j.Unwrap() {
		checkOnlyErrors(t, e)
	}
}

// findErr returns the error with key, or fails.
func findErr(t testing.TB, errs []*Error, key string) *Error {
	t.Helper()
	for _, e := range errs {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("no error for key %q; got %q", key, errs)
	return nil
}

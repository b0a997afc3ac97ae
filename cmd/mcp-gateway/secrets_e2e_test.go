package main

import (
	"strings"
	"testing"
)

// TestSecretsMaskedByShape: --show-config and status mask secrets by their
// shape as well as by their name: a URL's query signature (sig=) and
// password, credentials inside an environment value or an argument
// (postgres://u:PASS@h/db), --password=… and --token … arguments, a long
// random-looking value, and what a backend wrote to stderr or an HTTP
// error named.
func TestSecretsMaskedByShape(t *testing.T) {
	t.Parallel()
	remote := beServer{Name: "remote", URL: "http://" + freeAddr(t) + "/mcp?sv=2024&sig=sig-secret-1&x=1", Restart: "never"}
	local := tb("local", "-fail-start", "3", "-stderr-text", "connecting to postgres://app:pg-secret-6@db/prod with password=pw-secret-7",
		"--", "--password=pw-secret-2", "--token", "tok-secret-3", "postgres://app:pg-secret-4@db/prod", "q8Zr3kT9xW2mB7nL4pV6sY1dSECRET5")
	local.Env = map[string]string{"DATABASE_URL": "postgres://u:pg-secret-8@h/db", "CONN": "Xk29fLq83mZpT4vN7bW1cR6yUsECRET9", "LEVEL": "warn"}
	local.Restart = "never"
	cfg := beConfig(t, remote, local)
	secrets := []string{"sig-secret-1", "pw-secret-2", "tok-secret-3", "pg-secret-4", "SECRET5", "pg-secret-6", "pw-secret-7", "pg-secret-8", "sECRET9"}

	_, show, code := runCLI(t, "--show-config", "--config", cfg)
	if code != 0 {
		t.Fatalf("--show-config: exit %d\n%s", code, show)
	}
	for _, want := range []string{
		`"url": "http://` + strings.TrimPrefix(strings.Split(remote.URL, "?")[0], "http://") + `?sv=2024&sig=***&x=1"`,
		`"--password=***"`, `"--token",`, `"postgres://app:***@db/prod"`,
		`"DATABASE_URL": "postgres://u:***@h/db"`, `"CONN": "***"`, `"LEVEL": "warn"`, `"-fail-start",`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("--show-config lacks %s:\n%s", want, show)
		}
	}

	out, errOut, _ := runCLI(t, "status", "--config", cfg)
	js, _, _ := runCLI(t, "status", "--json", "--config", cfg)
	if !strings.Contains(out, "sig=***") || !strings.Contains(out, "postgres://app:***@db/prod with password=***") {
		t.Errorf("status does not show the masked URL and stderr:\n%s", out)
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"--show-config": show, "status": out + errOut, "status --json": js} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows %q:\n%s", what, s, text)
			}
		}
	}
}

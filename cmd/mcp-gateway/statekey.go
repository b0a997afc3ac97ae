package main

import "strings"

// minStateKey is the shortest state key not warned of: 32 bytes, what
// `openssl rand -hex 32` gives in half (docs/deploy.md).
const minStateKey = 32

// warnWeakStateKey warns of each key in the value of gateway.http.state_key_env
// (comma-separated, rotation) shorter than minStateKey. Every caller holds
// values it sealed — a sealed session id, a per_user_login link — and
// AES-GCM tells an offline guess right from wrong: a short key is guessed,
// and with it sign-in links and flows are forged for any person. A warning,
// not a refusal: deployments of earlier versions keep running. The key is
// never logged.
func (a *app) warnWeakStateKey(name, value string) {
	for i, k := range strings.Split(value, ",") {
		if k = strings.TrimSpace(k); k != "" && len(k) < minStateKey {
			a.log.Warn("gateway.http.state_key_env: a key shorter than 32 bytes can be guessed offline from any value it sealed (a session id, a sign-in link); use `openssl rand -hex 32`",
				"variable", name, "key", i+1, "bytes", len(k))
		}
	}
}

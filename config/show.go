package config

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Masked is what --show-config prints in place of a secret value.
const Masked = "***"

// WriteShowConfig writes the --show-config document
// {"version","sources","effective"} as two-space indented JSON. The API key
// appears only as "api_key": "set" or "unset" inside "openai". c and s are
// as Load returns them (a nil c or s stands for the defaults).
//
// Backend settings may hold tokens, so in "effective.servers":
//   - an env or headers value is printed as "***" when it was expanded from
//     ${VAR}, or when its name looks secret (it contains token, secret,
//     password, passwd, key, auth, credential, cookie, session or private,
//     in any case — "Authorization", "GITHUB_TOKEN", "API_KEY");
//   - command, cwd, url and args that were expanded from ${VAR} are printed
//     as written in the file ("--token=${MY_TOKEN}"), never expanded;
//   - a url's password (a user given without one, whole) and
//     secret-looking query values (as written or expanded) are printed as
//     "***"; so are those of openai.base_url.
//
// Names of variables (openai.api_key_env, gateway.http.auth_token_env) are
// shown; their values never are.
func WriteShowConfig(w io.Writer, version string, c *Config, s *Sources) error {
	if c == nil {
		c = Defaults()
	}
	src := Sources{Defaults: true, Env: []string{}, CLI: []string{}}
	if s != nil {
		src = *s // Load makes its lists non-nil
	}
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	eff := *c
	eff.Servers = make([]Server, 0, len(c.Servers))
	for _, sv := range c.Servers {
		eff.Servers = append(eff.Servers, c.masked(sv))
	}
	doc := showDoc{Version: version, Sources: src, Effective: showEffective{
		OpenAI: showOpenAI{APIKeyEnv: c.OpenAI.APIKeyEnv, BaseURL: RedactURL(c.OpenAI.BaseURL), APIKey: key},
		Config: &eff,
	}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("config: writing --show-config: %w", err)
	}
	return nil
}

type showDoc struct {
	Version   string        `json:"version"`
	Sources   Sources       `json:"sources"`
	Effective showEffective `json:"effective"`
}

// showEffective is the configuration with "openai" replaced: its field,
// shallower than the embedded Config's, wins, and comes first as before.
type showEffective struct {
	OpenAI showOpenAI `json:"openai"`
	*Config
}

type showOpenAI struct {
	APIKeyEnv string `json:"api_key_env"`
	BaseURL   string `json:"base_url"`
	APIKey    string `json:"api_key"` // "set" or "unset"
}

// masked returns a copy of s fit to print (see WriteShowConfig).
func (c *Config) masked(s Server) Server {
	written := func(field, v string) string {
		if w, ok := c.shown[shownKey(s.Name, field)]; ok {
			return w
		}
		return v
	}
	s.Command = written("command", s.Command)
	s.Cwd = written("cwd", s.Cwd)
	s.URL = RedactURL(written("url", s.URL))
	s.Args = slices.Clone(s.Args)
	for i, a := range s.Args {
		s.Args[i] = written(fmt.Sprintf("args[%d]", i), a)
	}
	mask := func(prefix string, m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		m = maps.Clone(m)
		for k := range m {
			_, expanded := c.shown[shownKey(s.Name, prefix+k)]
			if expanded || secretName(k) {
				m[k] = Masked
			}
		}
		return m
	}
	s.Env = mask("env.", s.Env)
	s.Headers = mask("headers.", s.Headers)
	if s.OAuth.ClientSecret != "" {
		s.OAuth.ClientSecret = Masked
	}
	return s
}

// secretName reports whether a variable, header or query parameter name
// looks like it holds a secret.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "password", "passwd", "key", "auth", "credential", "cookie", "session", "private"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL masks the password (or a user given without one) and the
// secret-looking query values of a URL, by text, so that it works on a URL
// as written with ${VAR} in it too.
func RedactURL(s string) string {
	rest, frag, hasFrag := strings.Cut(s, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if _, after, ok := strings.Cut(base, "://"); ok {
		authority, _, _ := strings.Cut(after, "/")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			// A user without a password is often a token itself
			// (https://TOKEN@host), so it is masked whole.
			masked := Masked
			if user, _, ok := strings.Cut(authority[:at], ":"); ok {
				masked = user + ":" + Masked
			}
			start := len(base) - len(after)
			base = base[:start] + masked + after[at:]
		}
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			if k, _, ok := strings.Cut(kv, "="); ok && secretName(k) {
				parts[i] = k + "=" + Masked
			}
		}
		base += "?" + strings.Join(parts, "&")
	}
	if hasFrag {
		base += "#" + frag
	}
	return base
}

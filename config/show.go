package config

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// Masked is what --show-config prints in place of a secret value.
const Masked = "***"

// WriteShowConfig writes the --show-config document
// {"version","sources","effective"} as two-space indented JSON. The API key
// appears only as "api_key": "set" or "unset" inside "openai". c and s are
// as Load returns them (a nil c or s stands for the defaults).
//
// Backend settings may hold tokens, so in "effective.servers" each value
// that may hold one is masked by its name and by its shape, with the rules
// of safetext.Mask (the ones status and the logs use too):
//   - an env or headers value is printed as "***" when it was expanded from
//     ${VAR}, or when its name looks secret (safetext.SecretName: it
//     contains token, secret, password, key, auth, … in any case —
//     "Authorization", "GITHUB_TOKEN", "API_KEY"); any other value is
//     masked by shape (safetext.MaskValue: a URL's password and secret
//     query values, password=…, a long random-looking token);
//   - an env or headers value that refers to a secret (${secret:NAME}) is
//     printed as written, reference and all: the value is in the secret
//     store, which --show-config does not read;
//   - command, cwd, url and args that were expanded from ${VAR} are printed
//     as written in the file ("--token=${MY_TOKEN}"), never expanded;
//   - args are masked by shape too (safetext.MaskArgs): --password=…, the
//     value after --token, a URL's password (postgres://u:***@h/db), a
//     random-looking token;
//   - a url's password (a user given without one, whole) and its
//     secret-looking query values (by name, sig=…, or by a random-looking
//     value; as written or expanded) are printed as "***"; so are those of
//     openai.base_url and oauth.client_metadata_url.
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
	s.Command = safetext.Mask(written("command", s.Command), Masked)
	s.Cwd = safetext.Mask(written("cwd", s.Cwd), Masked)
	s.URL = RedactURL(written("url", s.URL))
	args := slices.Clone(s.Args)
	for i, a := range args {
		args[i] = written(fmt.Sprintf("args[%d]", i), a)
	}
	s.Args = safetext.MaskArgs(args, Masked)
	mask := func(prefix string, m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		m = maps.Clone(m)
		for k, v := range m {
			w, expanded := c.shown[shownKey(s.Name, prefix+k)]
			if s.secrets != nil && s.secrets.fields[prefix+k] != nil {
				// The reference, never the value (which Load never read).
				m[k] = safetext.MaskValue(w, Masked)
				continue
			}
			if expanded || safetext.SecretName(k) {
				m[k] = Masked
			} else {
				m[k] = safetext.MaskValue(v, Masked)
			}
		}
		return m
	}
	s.Env = mask("env.", s.Env)
	s.Headers = mask("headers.", s.Headers)
	if s.OAuth.ClientSecret != "" {
		s.OAuth.ClientSecret = Masked
	}
	s.OAuth.ClientMetadataURL = RedactURL(s.OAuth.ClientMetadataURL)
	return s
}

// RedactURL masks the password (or a user given without one) and the
// secret-looking query values of a URL (safetext.Mask), by text, so that it
// works on a URL as written with ${VAR} in it too.
func RedactURL(s string) string { return safetext.Mask(s, Masked) }

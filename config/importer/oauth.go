package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// rawOAuth is a remote server's pre-registered OAuth client as the client
// wrote it: Claude Code's and Gemini CLI's "oauth" object, Cursor's "auth"
// object, Codex's scopes and [mcp_servers.NAME.oauth] table.
type rawOAuth struct {
	clientID     string
	clientSecret string
	scopes       []string
	redirectURI  string
	// callbackPort is Claude Code's fixed callback port: its redirect URI
	// is http://localhost:PORT/callback.
	callbackPort int
}

func (o rawOAuth) empty() bool {
	return o.clientID == "" && o.clientSecret == "" && len(o.scopes) == 0 && o.redirectURI == "" && o.callbackPort == 0
}

// oauthKeys maps the keys of a JSON client's oauth (or Cursor's auth)
// object to what they set; a key not here is reported as not carried over.
var oauthKeys = map[string]func(o *rawOAuth, v json.RawMessage) error{
	"clientId":      func(o *rawOAuth, v json.RawMessage) error { return json.Unmarshal(v, &o.clientID) },
	"CLIENT_ID":     func(o *rawOAuth, v json.RawMessage) error { return json.Unmarshal(v, &o.clientID) },
	"clientSecret":  func(o *rawOAuth, v json.RawMessage) error { return json.Unmarshal(v, &o.clientSecret) },
	"CLIENT_SECRET": func(o *rawOAuth, v json.RawMessage) error { return json.Unmarshal(v, &o.clientSecret) },
	"redirectUri":   func(o *rawOAuth, v json.RawMessage) error { return json.Unmarshal(v, &o.redirectURI) },
	"callbackPort": func(o *rawOAuth, v json.RawMessage) error {
		if err := json.Unmarshal(v, &o.callbackPort); err != nil || o.callbackPort < 1 || o.callbackPort > 65535 {
			return errors.New("not a port")
		}
		return nil
	},
	"scopes": func(o *rawOAuth, v json.RawMessage) error {
		// Claude Code writes one space-separated string; Cursor and
		// Gemini CLI a list.
		var s string
		if json.Unmarshal(v, &s) == nil {
			o.scopes = strings.Fields(s)
			return nil
		}
		var err error
		o.scopes, err = jsonStrings(v)
		return err
	},
}

// parseJSONOAuth reads the oauth (or auth) object of a JSON entry. It
// returns the notes on what it could not carry over, and the key of a
// value of the wrong type.
func parseJSONOAuth(field string, v json.RawMessage) (rawOAuth, []string, string) {
	var o rawOAuth
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil {
		return o, nil, field
	}
	var notes, ignored []string
	unused := config.OAuthForeignKeys()
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		set, ok := oauthKeys[k]
		switch {
		case ok:
			if set(&o, obj[k]) != nil {
				return o, nil, field + "." + k
			}
		case unused[k] != "":
			notes = append(notes, fmt.Sprintf("%s.%s not carried over: %s", field, k, unused[k]))
		default:
			ignored = append(ignored, field+"."+k)
		}
	}
	if len(ignored) > 0 {
		notes = append(notes, "not carried over: "+strings.Join(ignored, ", "))
	}
	return o, notes, ""
}

// codexOAuth is the [mcp_servers.NAME.oauth] table of Codex's config.toml.
type codexOAuth struct {
	ClientID     string `toml:"client_id"`
	CallbackURL  string `toml:"callback_url"`
	CallbackPort int    `toml:"callback_port"`
}

// codexOAuthOf reads a Codex server's OAuth settings, with notes on what
// the gateway does without.
func codexOAuthOf(s codexServer) (rawOAuth, []string) {
	o := rawOAuth{scopes: s.Scopes}
	var notes []string
	if s.OAuth != nil {
		o.clientID = s.OAuth.ClientID
		if s.OAuth.CallbackURL != "" {
			notes = append(notes, fmt.Sprintf("oauth.callback_url %q not carried over: Codex adds a callback id of its own to it; if the client was registered with an http loopback URL, set oauth.redirect_uri to it", s.OAuth.CallbackURL))
		}
		if s.OAuth.CallbackPort > 0 {
			notes = append(notes, fmt.Sprintf("oauth.callback_port %d not carried over: if the client was registered with a redirect URI on that port, set oauth.redirect_uri to it", s.OAuth.CallbackPort))
		}
	}
	if s.OAuthResource != "" {
		notes = append(notes, "oauth_resource not carried over: mcp-gateway has no setting for the resource it asks a token for")
	}
	return o, notes
}

// config translates the OAuth settings for the gateway (tr translates a
// value's variables, note adds a note). A client secret written literally
// is not copied: it becomes a ${VAR} reference named after the server, to be
// set in the gateway's environment, as a VS Code input is.
func (o rawOAuth) config(key string, c *Client, tr func(string) string, note func(string)) config.OAuth {
	out := config.OAuth{Scopes: o.scopes, RedirectURI: o.redirectURI}
	if o.callbackPort > 0 && out.RedirectURI == "" {
		out.RedirectURI = config.CallbackRedirectURI(o.callbackPort)
	}
	if msg := config.CheckRedirectURI(out.RedirectURI); out.RedirectURI != "" && msg != "" {
		// One the gateway cannot listen on costs that setting, not the
		// server.
		note(fmt.Sprintf("oauth redirect URI %q not carried over: oauth.redirect_uri %s", out.RedirectURI, msg))
		out.RedirectURI = ""
	}
	if strings.Contains(o.clientID, "${") {
		note(fmt.Sprintf("oauth client id %s not carried over: mcp-gateway does not expand variables in oauth.client_id; write the id there", o.clientID))
	} else {
		out.ClientID = o.clientID
	}
	switch {
	case o.clientSecret != "" && strings.Contains(o.clientSecret, "${"):
		out.ClientSecret = tr(o.clientSecret)
	case o.clientSecret != "":
		env := envVarName(key+"_CLIENT_SECRET", "MCP_")
		out.ClientSecret = "${" + env + "}"
		note(fmt.Sprintf("the oauth client secret is written in the %s file, not copied here: set %s to it in the gateway's environment", c.Title, env))
	case o.clientID != "" && c == claudeCode:
		note("Claude Code keeps a client secret (--client-secret) in its credential store: if this client has one, set oauth.client_secret")
	}
	return out
}

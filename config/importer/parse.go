package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// rawEntry is one server as the client wrote it, before variables are
// translated.
type rawEntry struct {
	key       string
	source    Source
	command   string
	args      []string
	env       map[string]string
	cwd       string
	url       string
	transport string
	headers   map[string]string
	// envHeaders are headers whose values are already the gateway's
	// ${VAR} references (Codex's bearer_token_env_var, env_http_headers).
	envHeaders map[string]string
	enabled    bool
	timeoutMS  int
	include    []string
	exclude    []string
	oauth      rawOAuth
	notes      []string
}

// parseJSON reads a JSON client file (comments and trailing commas, which
// VS Code allows, are accepted) and returns its servers, each map sorted by
// name.
func parseJSON(path string, data []byte, c *Client, dir string) ([]rawEntry, error) {
	data = stripJSONC(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(path, data, err)
	}
	var out []rawEntry
	size := 0
	add := func(keys []string, raw json.RawMessage) error {
		if size += len(raw); size > maxServersSize {
			return &Error{File: path, Msg: fmt.Sprintf("%s: the server entries take %s; import reads at most %s of them, as much as a gateway configuration file may hold", dotted(keys), mib(size), mib(maxServersSize))}
		}
		es, err := parseJSONServers(path, data, keys, raw)
		out = append(out, es...)
		return err
	}
	key := c.ServersKey
	if c == vscode {
		if _, ok := top["servers"]; !ok {
			// settings.json keeps them under "mcp": {"servers": ...}.
			var mcp map[string]json.RawMessage
			if json.Unmarshal(top["mcp"], &mcp) == nil && mcp["servers"] != nil {
				return out, add([]string{"mcp", "servers"}, mcp["servers"])
			}
		}
	}
	if raw, ok := top[key]; ok {
		if err := add([]string{key}, raw); err != nil {
			return nil, err
		}
	}
	if c == claudeCode && dir != "" {
		// The local scope: projects.<dir>.mcpServers of ~/.claude.json.
		var projects map[string]struct {
			MCPServers json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(top["projects"], &projects) == nil {
			for _, p := range slices.Sorted(maps.Keys(projects)) {
				if filepath.Clean(p) == filepath.Clean(dir) && projects[p].MCPServers != nil {
					if err := add([]string{"projects", p, "mcpServers"}, projects[p].MCPServers); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return out, nil
}

// parseJSONServers reads one server map.
func parseJSONServers(path string, data []byte, keys []string, raw json.RawMessage) ([]rawEntry, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, &Error{File: path, Line: lineOf(data, raw), Msg: dotted(keys) + ": must be a mapping of server names to objects"}
	}
	var out []rawEntry
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		e := rawEntry{key: name, source: Source{File: path, Path: keys}, enabled: true}
		fields := servers[name]
		k := dotted(append(slices.Clone(keys), name))
		bad := func(field, want string) error {
			return &Error{File: path, Line: lineOf(data, fields[field]), Msg: k + "." + field + ": must be " + want}
		}
		var ignored []string
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			v := fields[f]
			var err error
			switch f {
			case "command":
				err = json.Unmarshal(v, &e.command)
			case "args":
				e.args, err = jsonStrings(v)
			case "env", "envs":
				e.env, err = jsonStringMap(v)
			case "cwd":
				err = json.Unmarshal(v, &e.cwd)
			case "url", "serverUrl":
				err = json.Unmarshal(v, &e.url)
			case "httpUrl": // Gemini CLI: Streamable HTTP ("url" is SSE there)
				err = json.Unmarshal(v, &e.url)
				if _, typed := fields["type"]; !typed {
					e.transport = "http"
				}
			case "timeout": // Gemini CLI: milliseconds
				err = json.Unmarshal(v, &e.timeoutMS)
			case "includeTools": // Gemini CLI
				e.include, err = jsonStrings(v)
			case "excludeTools": // Gemini CLI
				var ex []string
				ex, err = jsonStrings(v)
				e.exclude = append(e.exclude, ex...)
			case "headers":
				e.headers, err = jsonStringMap(v)
			case "type":
				err = json.Unmarshal(v, &e.transport)
			case "disabled":
				var d bool
				err = json.Unmarshal(v, &d)
				e.enabled = e.enabled && !d
			case "enabled":
				var en bool
				err = json.Unmarshal(v, &en)
				e.enabled = e.enabled && en
			case "disabledTools": // Windsurf
				e.exclude, err = jsonStrings(v)
			case "oauth", "auth": // Claude Code, Gemini CLI; Cursor
				o, notes, badKey := parseJSONOAuth(f, v)
				if badKey != "" {
					return nil, &Error{File: path, Line: lineOf(data, v), Msg: k + "." + badKey + ": has a value of the wrong type"}
				}
				e.oauth = o
				e.notes = append(e.notes, notes...)
			case "envFile":
				var s string
				_ = json.Unmarshal(v, &s)
				e.notes = append(e.notes, fmt.Sprintf("envFile %q is not read by mcp-gateway: put its variables in env", s))
			default:
				ignored = append(ignored, f)
			}
			if err != nil {
				want := "a string"
				switch f {
				case "args", "disabledTools", "includeTools", "excludeTools":
					want = "a list of strings"
				case "timeout":
					want = "a number of milliseconds"
				case "env", "envs", "headers":
					want = "a mapping of names to strings"
				case "disabled", "enabled":
					want = "true or false"
				}
				return nil, bad(f, want)
			}
		}
		if len(ignored) > 0 {
			e.notes = append(e.notes, "not carried over: "+strings.Join(ignored, ", "))
		}
		out = append(out, e)
	}
	return out, nil
}

// jsonStrings decodes a list of strings; numbers and booleans are taken as
// their text, as clients pass them to the command line.
func jsonStrings(v json.RawMessage) ([]string, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, err
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		s, err := scalarString(r)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func jsonStringMap(v json.RawMessage) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	out := make(map[string]string, len(raw))
	for k, r := range raw {
		s, err := scalarString(r)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

func scalarString(r json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s, nil
	}
	t := string(bytes.TrimSpace(r))
	if t == "true" || t == "false" || len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
		return t, nil
	}
	return "", errors.New("not a string")
}

// jsonError turns a decoding error into an *Error with the line.
func jsonError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &Error{File: path, Line: lineAt(data, se.Offset), Msg: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &Error{File: path, Line: lineAt(data, te.Offset), Msg: "must be a JSON object"}
	}
	return &Error{File: path, Msg: "invalid JSON: " + err.Error()}
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// lineOf finds the line of sub (a value decoded from data) when it occurs
// exactly once in data, or 0.
func lineOf(data []byte, sub []byte) int {
	if len(sub) == 0 || len(data) == 0 {
		return 0
	}
	i := bytes.Index(data, sub)
	if i < 0 || bytes.Count(data, sub) != 1 {
		return 0 // not found, or not unambiguously
	}
	return lineAt(data, int64(i))
}

// parseTOML reads a Codex config.toml: its [mcp_servers.NAME] tables.
func parseTOML(path string, data []byte) ([]rawEntry, error) {
	if len(data) > maxServersSize {
		// Codex keeps no history in it: the file is its settings.
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file takes %s; import reads at most %s of a TOML file, as much as a gateway configuration file may hold", mib(len(data)), mib(maxServersSize))}
	}
	var top struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(data, &top); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, &Error{File: path, Line: row, Msg: "invalid TOML: " + de.Error()}
		}
		var se *toml.StrictMissingError
		if errors.As(err, &se) {
			return nil, &Error{File: path, Msg: "invalid TOML: " + se.Error()}
		}
		return nil, &Error{File: path, Msg: "invalid TOML: " + err.Error()}
	}
	var out []rawEntry
	for _, name := range slices.Sorted(maps.Keys(top.MCPServers)) {
		s := top.MCPServers[name]
		e := rawEntry{
			key:     name,
			source:  Source{File: path, Path: []string{"mcp_servers"}},
			command: s.Command, args: s.Args, env: s.Env, cwd: s.Cwd, url: s.URL,
			headers: s.HTTPHeaders,
			enabled: s.Enabled == nil || *s.Enabled,
			include: s.EnabledTools, exclude: s.DisabledTools,
		}
		if s.URL != "" {
			e.transport = "http" // Codex speaks Streamable HTTP to a url
		}
		var notes []string
		e.oauth, notes = codexOAuthOf(s)
		e.notes = append(e.notes, notes...)
		if s.ToolTimeoutSec > 0 {
			e.timeoutMS = int(s.ToolTimeoutSec * 1000)
		}
		if s.BearerTokenEnvVar != "" {
			e.envHeaders = withHeader(e.envHeaders, "Authorization", "Bearer ${"+s.BearerTokenEnvVar+"}")
		}
		for _, h := range slices.Sorted(maps.Keys(s.EnvHTTPHeaders)) {
			e.envHeaders = withHeader(e.envHeaders, h, "${"+s.EnvHTTPHeaders[h]+"}")
		}
		if len(s.EnvVars) > 0 {
			e.notes = append(e.notes, "env_vars "+strings.Join(s.EnvVars, ", ")+": mcp-gateway passes its whole environment to servers")
		}
		if s.StartupTimeoutSec > 0 || s.StartupTimeoutMS > 0 {
			e.notes = append(e.notes, "startup timeout: not needed (the gateway answers at once; gateway.start_limit_ms bounds a start)")
		}
		out = append(out, e)
	}
	return out, nil
}

// codexServer is one [mcp_servers.NAME] table of Codex's config.toml.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	EnvVars           []string          `toml:"env_vars"`
	Cwd               string            `toml:"cwd"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	Enabled           *bool             `toml:"enabled"`
	StartupTimeoutSec float64           `toml:"startup_timeout_sec"`
	StartupTimeoutMS  int               `toml:"startup_timeout_ms"`
	ToolTimeoutSec    float64           `toml:"tool_timeout_sec"`
	EnabledTools      []string          `toml:"enabled_tools"`
	DisabledTools     []string          `toml:"disabled_tools"`
	Scopes            []string          `toml:"scopes"`
	OAuthResource     string            `toml:"oauth_resource"`
	OAuth             *codexOAuth       `toml:"oauth"`
}

// withHeader sets h[k] = v, the header values being ${VAR} references that
// the gateway expands: Codex reads them from the environment too.
func withHeader(h map[string]string, k, v string) map[string]string {
	if h == nil {
		h = map[string]string{}
	}
	h[k] = v
	return h
}

// hasTopKey reports whether data is a JSON object with key at its top.
func hasTopKey(data []byte, key string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(stripJSONC(data), &top) != nil {
		return false
	}
	_, ok := top[key]
	return ok
}

// dotted joins keys, quoting any that holds a dot or is empty.
func dotted(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if k == "" || strings.ContainsAny(k, ". \"") {
			k = strconv.Quote(k)
		}
		parts[i] = k
	}
	return strings.Join(parts, ".")
}

// claudeCodeOff are the servers Claude Code turned off for a project.
type claudeCodeOff struct {
	servers, mcpJSON []string
}

// add reads projects.<dir>.disabledMcpServers and disabledMcpjsonServers
// from a ~/.claude.json.
func (o *claudeCodeOff) add(data []byte, dir string) {
	var top struct {
		Projects map[string]struct {
			DisabledMcpServers     []string `json:"disabledMcpServers"`
			DisabledMcpjsonServers []string `json:"disabledMcpjsonServers"`
		} `json:"projects"`
	}
	if dir == "" || json.Unmarshal(stripJSONC(data), &top) != nil {
		return
	}
	for p, v := range top.Projects {
		if filepath.Clean(p) == filepath.Clean(dir) {
			o.servers = append(o.servers, v.DisabledMcpServers...)
			o.mcpJSON = append(o.mcpJSON, v.DisabledMcpjsonServers...)
		}
	}
}

// why says why Claude Code does not run e in this project, or "".
func (o *claudeCodeOff) why(e rawEntry) string {
	if filepath.Base(e.source.File) == ".mcp.json" {
		if slices.Contains(o.mcpJSON, e.key) {
			return "Claude Code has it in disabledMcpjsonServers for this project: imported disabled"
		}
		return ""
	}
	if slices.Contains(o.servers, e.key) {
		return "Claude Code has it in disabledMcpServers for this project: imported disabled"
	}
	return ""
}

// mib formats a size in MiB, "21.3 MiB".
func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

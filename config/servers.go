package config

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// serverName is the syntax of a backend's name.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// prefixChars is the syntax of an explicit prefix ("" is allowed).
var prefixChars = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)

// clientServerKeys are per-server keys of other clients that the gateway
// does not use; they are skipped with a warning.
var clientServerKeys = map[string]string{
	"autoApprove":   "a Cline/Roo setting",
	"alwaysAllow":   "a Cline/Roo setting",
	"transportType": "a Cline setting; the transport follows command or url",
	"envFile":       "a VS Code setting; the file is not read, put the variables in env",
	"description":   "a description",
	"gallery":       "a VS Code setting",
}

// transports maps the `type` values of client files to Server.Transport.
var transports = map[string]string{
	"stdio":           "stdio",
	"http":            "http",
	"streamable-http": "http",
	"streamableHttp":  "http",
	"sse":             "sse",
}

// TransportOf returns the Server.Transport that a client file's `type`
// means, and false for a type the gateway does not know.
func TransportOf(typ string) (string, bool) {
	t, ok := transports[typ]
	return t, ok
}

// serverItem is one server entry before parsing.
type serverItem struct {
	name   string // the map key, or "" for the list form
	path   string // "servers[0]" or "mcpServers.memory"
	line   int
	node   *yaml.Node
	isList bool
}

// servers parses the `servers:` and `mcpServers:` sections into
// l.cfg.Servers: list entries in file order, then map entries (mcpServers,
// or a VS Code style `servers:` mapping) sorted by name.
func (l *loader) servers() {
	var items, mapped []serverItem
	// `servers:` first, whatever the order in the file: "servers" sorts
	// after "mcpServers", so the keys are compared in reverse.
	slices.SortStableFunc(l.serverSections, func(a, b entry) int { return strings.Compare(b.key, a.key) })
	for _, e := range l.serverSections {
		n := l.resolve(e.val)
		switch {
		case n == nil || isNull(n):
		case n.Kind == yaml.SequenceNode && e.key == "servers":
			for i, c := range n.Content {
				items = append(items, serverItem{path: fmt.Sprintf("%s[%d]", e.key, i), line: c.Line, node: c, isList: true})
			}
		case n.Kind == yaml.MappingNode:
			es, _ := l.mapping(n, e.key)
			for _, x := range es {
				mapped = append(mapped, serverItem{name: x.key, path: join(e.key, x.key), line: x.line, node: x.val})
			}
		case e.key == "servers":
			l.errLine(n.Line, e.key, "must be a list of servers or a mapping of names to servers, not %s", kindName(n))
		default:
			l.errLine(n.Line, e.key, "must be a mapping of names to servers, not %s", kindName(n))
		}
	}
	slices.SortStableFunc(mapped, func(a, b serverItem) int { return strings.Compare(a.name, b.name) })
	items = append(items, mapped...)

	seen := map[string]string{} // name → path of its first entry
	for _, it := range items {
		s, ok := l.server(it)
		if !ok {
			continue
		}
		if first, dup := seen[s.Name]; dup {
			l.errLine(it.line, it.path, "duplicate server name %q (also %s)", s.Name, first)
			continue
		}
		seen[s.Name] = it.path
		l.cfg.Servers = append(l.cfg.Servers, s)
	}
}

// serverEntry is a server entry as written: Server's keys (and their
// aliases), and `disabled` and Windsurf's `disabledTools` (names that join
// tools.exclude), as some clients write them.
type serverEntry struct {
	Server
	Disabled      bool     `json:"disabled"`
	DisabledTools []string `json:"disabledTools"`
	item          serverItem
}

// checkKey checks a key of a server entry as it is read.
func (e *serverEntry) checkKey(l *loader, field, key string, line int) {
	s := &e.Server
	switch field {
	case "name":
		if !e.item.isList && s.Name != e.item.name {
			l.errLine(line, key, "is %q but the entry's key is %q; remove name or make them equal", s.Name, e.item.name)
		}
	case "prefix":
		if !prefixChars.MatchString(s.Prefix) {
			l.errLine(line, key, "may hold only letters, digits, '_', '-' and '.'")
		}
	case "trust":
		switch s.Trust {
		case "pin", "approve", "off":
		case "true", "false":
			// Gemini CLI's trust, which skips its confirmations.
			l.warn(line, key, "ignored by mcp-gateway (a Gemini CLI setting); the gateway's trust is pin, approve or off")
			s.Trust = ""
		default:
			l.errLine(line, key, "must be pin, approve or off, not %q", truncate(s.Trust, 40))
		}
	case "restart":
		if s.Restart != "on-failure" && s.Restart != "never" {
			l.errLine(line, key, "must be on-failure or never, not %q", truncate(s.Restart, 40))
		}
	case "protocol":
		if s.Protocol != "auto" && s.Protocol != "2025-11-25" && s.Protocol != "2026-07-28" {
			l.errLine(line, key, "must be auto, 2025-11-25 or 2026-07-28, not %q", truncate(s.Protocol, 40))
		}
	case "from":
		if msg := checkFrom(s.From); msg != "" {
			l.errLine(line, key, "%s", msg)
		}
	case "file_sha256":
		if !sha256Hex.MatchString(s.FileSHA256) {
			l.errLine(line, key, "must be a SHA-256 in hex (64 digits 0-9 a-f), not %q", truncate(s.FileSHA256, 80))
		}
	case "timeout_ms":
		if strings.HasSuffix(key, ".timeout") && s.TimeoutMS > 0 && s.TimeoutMS < 1000 {
			l.warn(line, key, "is in milliseconds: %d ms is very short; write timeout_ms", s.TimeoutMS)
		}
	}
}

// checkKey checks the glob patterns of tools.include or tools.exclude as
// they are read.
func (t *ToolFilter) checkKey(l *loader, field, key string, line int) {
	globs := t.Include
	if field == "exclude" {
		globs = t.Exclude
	}
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			l.errLine(line, fmt.Sprintf("%s[%d]", key, i), "%q is not a valid glob pattern (path.Match syntax)", g)
		}
	}
}

// server decodes one entry, then checks it. Errors are recorded; ok is false
// when the entry is unusable.
func (l *loader) server(it serverItem) (s Server, ok bool) {
	nerr := len(l.errs)
	p := it.path
	if n := l.resolve(it.node); n != nil && isNull(n) {
		l.errLine(it.line, p, "must be a mapping with command or url, not null")
		return s, false
	}
	e := serverEntry{item: it, Server: Server{Enabled: true, Restart: "on-failure", Tools: ToolFilter{Include: []string{}, Exclude: []string{}}}}
	if !l.fields(it.node, p, reflect.ValueOf(&e).Elem(), clientServerKeys) {
		return s, false
	}
	s = e.Server
	s.Enabled = s.Enabled && !e.Disabled
	s.Tools.Exclude = append(s.Tools.Exclude, e.DisabledTools...)

	// Name and prefix.
	name, named := l.origin[join(p, "name")]
	if !it.isList {
		s.Name = it.name
	}
	if !named {
		name.line = it.line
	}
	switch {
	case s.Name == "" && it.isList:
		l.errLine(it.line, join(p, "name"), "required")
	case !serverName.MatchString(s.Name):
		l.errLine(name.line, join(p, "name"), "%q may hold only letters, digits, '_' and '-'", truncate(s.Name, 40))
	}
	if _, ok := l.origin[join(p, "prefix")]; !ok {
		s.Prefix = s.Name
	}
	s.Source = fmt.Sprintf("%s:%d", l.file, it.line)

	l.expandServer(&s, p)
	l.secretsInClear(&s, p)
	l.redirectURI(&s.OAuth, p)
	l.transport(&s, p, it.line)
	l.upstreamAuth(&s, p, it.line)
	l.serverSandbox(&s, p)
	return s, len(l.errs) == nerr
}

// expandServer expands ${VAR} (and "~/" in paths) in the values of server
// s, placing each message at its value's key under path p, and checks the
// names of env and headers.
func (l *loader) expandServer(s *Server, p string) {
	x := func(field string, v string) string {
		// A secret is the server's own: in its env, headers and args
		// only, never where it would travel elsewhere (a URL) or be shown.
		secrets := strings.HasPrefix(field, "env.") || strings.HasPrefix(field, "headers.")
		return l.expand(s.Name, field, join(p, field), v, l.origin[join(p, field)].line, &s.secrets, secrets)
	}
	// Relative paths are the file's (a client starts the gateway anywhere);
	// a command with a directory part is cwd's when there is one, as exec
	// runs it. A bare name is looked up in PATH, and args are the backend's.
	s.Cwd = ResolvePath(l.dir, ExpandHome(x("cwd", s.Cwd), l.home))
	s.Command = ExpandHome(x("command", s.Command), l.home)
	if HasDir(s.Command) {
		s.Command = ResolvePath(cmp.Or(s.Cwd, l.dir), s.Command)
	}
	s.URL = x("url", s.URL)
	args := l.origin[join(p, "args")]
	for i, a := range s.Args {
		s.Args[i] = l.expand(s.Name, fmt.Sprintf("args[%d]", i), fmt.Sprintf("%s.args[%d]", p, i), a, args.line, &s.secrets, true)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		s.Env[k] = x("env."+k, s.Env[k])
		if k == "" || strings.ContainsAny(k, "=\x00") {
			l.errLine(l.origin[join(p, "env."+k)].line, join(p, "env"), "%q is not a valid environment variable name", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		s.Headers[k] = x("headers."+k, s.Headers[k])
		if k == "" || strings.ContainsAny(k, " :\r\n\x00") || strings.ContainsAny(s.Headers[k], "\r\n\x00") {
			l.errLine(l.origin[join(p, "headers."+k)].line, join(p, "headers."+k), "is not a valid HTTP header")
		}
	}
	s.OAuth.ClientSecret = x("oauth.client_secret", s.OAuth.ClientSecret)
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
}

// redirectURI turns Claude Code's callback_port into the redirect URI it
// stands for, and checks the redirect URI of the oauth block at path p.
func (l *loader) redirectURI(a *OAuth, p string) {
	if port, o := a.CallbackPort, l.origin[join(p, "oauth.callback_port")]; port != 0 {
		switch {
		case port < 1 || port > 65535:
			l.errLine(o.line, o.key, "must be a port number 1..65535, not %d", port)
		case a.RedirectURI != "":
			l.errLine(o.line, o.key, "%s and a redirect URI both given; use one", o.key[strings.LastIndexByte(o.key, '.')+1:])
		default:
			a.RedirectURI = CallbackRedirectURI(port)
		}
		a.CallbackPort = 0
	}
	if a.RedirectURI == "" {
		return
	}
	if msg := CheckRedirectURI(a.RedirectURI); msg != "" {
		o := l.origin[join(p, "oauth.redirect_uri")]
		if strings.HasSuffix(o.key, ".redirectUri") {
			// Gemini CLI's own setting, which may redirect to a page
			// of its own: the gateway does without it.
			l.warn(o.line, o.key, "ignored by mcp-gateway, which listens for the redirect on an http loopback URL with a port")
			a.RedirectURI = ""
		} else {
			l.errLine(o.line, o.key, "%s", msg)
		}
	}
}

// transport checks that server s (at path p, line) has exactly one of
// command and url, a timeout in range and a `type` that fits, and
// normalizes the type.
func (l *loader) transport(s *Server, p string, line int) {
	switch url := l.origin[join(p, "url")]; {
	case s.Command != "" && s.URL != "":
		l.errLine(line, p, "has both command and url; give exactly one")
	case s.Command == "" && s.URL == "":
		l.errLine(line, p, "needs command (a local server) or url (a remote one)")
	case s.URL != "":
		if msg := checkHTTPURL(s.URL); msg != "" {
			l.errLine(url.line, url.key, "%s", msg)
		}
	}
	if timeout := l.origin[join(p, "timeout_ms")]; s.TimeoutMS < 0 || s.TimeoutMS > maxTimeoutMS {
		l.errLine(timeout.line, timeout.key, "must be between 0 (the gateway default) and %d ms", maxTimeoutMS)
	}
	if typ, o := s.Transport, l.origin[join(p, "type")]; typ != "" {
		t, ok := TransportOf(typ)
		switch {
		case !ok:
			l.errLine(o.line, o.key, "must be stdio, http, sse, streamable-http or streamableHttp, not %q", truncate(typ, 40))
		case t == "stdio" && s.URL != "" && s.Command == "":
			l.errLine(o.line, o.key, "is stdio but the entry has a url; stdio needs command")
		case t != "stdio" && s.Command != "" && s.URL == "":
			l.errLine(o.line, o.key, "is %s but the entry has a command; %s needs url", typ, typ)
		}
		s.Transport = t
	}
}

// serverSandbox checks server s's own sandbox block (at path p) and makes
// s.Sandbox the effective one: the block over gateway.sandbox, for a local
// server; a remote server runs elsewhere and has none.
func (l *loader) serverSandbox(s *Server, p string) {
	o, given := l.origin[join(p, "sandbox")]
	if s.Command == "" {
		if given && s.Sandbox.On() {
			l.errLine(o.line, o.key, "confines a local server (command); a remote server (url) runs elsewhere")
		}
		s.Sandbox = Sandbox{}
		return
	}
	l.checkSandbox(&s.Sandbox, join(p, "sandbox"))
	if _, mode := l.origin[join(p, "sandbox.mode")]; given && !mode && !l.cfg.Gateway.Sandbox.On() {
		l.warn(o.line, o.key, "has no mode and gateway.sandbox is off, so it is off; write mode: enforce or best_effort")
	}
	s.Sandbox = l.sandboxOf(s.Sandbox, p)
	if src := l.sandboxSources(s.Sandbox, p); src != nil {
		if l.src.Sandboxes == nil {
			l.src.Sandboxes = map[string]map[string]string{}
		}
		l.src.Sandboxes[s.Name] = src
	}
}

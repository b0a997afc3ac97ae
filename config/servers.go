package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// serverName is the syntax of a backend's name.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// prefixChars is the syntax of an explicit prefix ("" is allowed).
var prefixChars = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)

var serverKeys = []string{"name", "command", "args", "env", "envs", "cwd", "url", "headers", "timeout_ms", "enabled", "disabled", "prefix", "tools", "restart", "type"}

// serverAliases are other clients' spellings of gateway keys.
var serverAliases = map[string]string{
	"envs":      "env", // seed MCP Gateway
	"serverUrl": "url", // Windsurf
	"httpUrl":   "url", // Gemini CLI
	"timeout":   "timeout_ms",
	"disabled":  "enabled",
}

// clientServerKeys are per-server keys of other clients that the gateway
// does not use; they are skipped with a warning.
var clientServerKeys = map[string]string{
	"autoApprove":   "a Cline/Roo setting",
	"alwaysAllow":   "a Cline/Roo setting",
	"transportType": "a Cline setting; the transport follows command or url",
	"envFile":       "a VS Code setting; the file is not read, put the variables in env",
	"trust":         "a Gemini CLI setting",
	"oauth":         "a client OAuth setting; use headers",
	"description":   "a description",
}

// transports maps the `type` values of client files to Server.Transport.
var transports = map[string]string{
	"stdio":           "stdio",
	"http":            "http",
	"streamable-http": "http",
	"streamableHttp":  "http",
	"sse":             "sse",
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
func (l *loader) servers(list, mcp []entry) {
	var items, mapped []serverItem
	collect := func(e entry, allowList bool) {
		n := l.resolve(e.val)
		if n == nil || isNull(n) {
			return
		}
		switch {
		case n.Kind == yaml.SequenceNode && allowList:
			for i, c := range n.Content {
				items = append(items, serverItem{path: fmt.Sprintf("%s[%d]", e.key, i), line: c.Line, node: c, isList: true})
			}
		case n.Kind == yaml.MappingNode:
			es, ok := l.mapping(n, e.key)
			if !ok {
				return
			}
			for _, x := range es {
				mapped = append(mapped, serverItem{name: x.key, path: join(e.key, x.key), line: x.line, node: x.val})
			}
		case allowList:
			l.errLine(n.Line, e.key, "must be a list of servers or a mapping of names to servers, not %s", kindName(n))
		default:
			l.errLine(n.Line, e.key, "must be a mapping of names to servers, not %s", kindName(n))
		}
	}
	for _, e := range list {
		collect(e, true)
	}
	for _, e := range mcp {
		collect(e, false)
	}
	slices.SortStableFunc(mapped, func(a, b serverItem) int { return strings.Compare(a.name, b.name) })
	items = append(items, mapped...)

	l.cfg.Servers = []Server{}
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

// server parses one entry. Errors are recorded; ok is false when the entry
// is unusable.
func (l *loader) server(it serverItem) (s Server, ok bool) {
	nerr := len(l.errs)
	p := it.path
	if n := l.resolve(it.node); n != nil && isNull(n) {
		l.errLine(it.line, p, "must be a mapping with command or url, not null")
		return s, false
	}
	es, ok := l.mapping(it.node, p)
	if !ok {
		return s, false
	}
	s = Server{Name: it.name, Enabled: true, Restart: "on-failure", Tools: ToolFilter{Include: []string{}, Exclude: []string{}}}
	var (
		nameLine, timeoutLine     int
		prefix                    *string
		given                     = map[string]string{} // canonical key → key as written
		envLines, headerLines     map[string]int
		enabled, disabled         = true, false
		typ                       string
		typLine, cmdLine, urlLine int
	)
	for _, x := range es {
		k := join(p, x.key)
		canon := x.key
		if a, ok := serverAliases[x.key]; ok {
			canon = a
		}
		if why, ok := clientServerKeys[x.key]; ok {
			l.warn(x.line, k, "ignored by mcp-gateway (%s)", why)
			continue
		}
		if !slices.Contains(serverKeys, canon) {
			l.unknown(x, p, serverKeys)
			continue
		}
		if prev, dup := given[canon]; dup && x.key != "disabled" && prev != "disabled" {
			l.errLine(x.line, k, "%s and %s both given; use one", prev, x.key)
			continue
		}
		given[canon] = x.key
		switch x.key {
		case "name":
			var name string
			if !l.str(x, k, &name) {
				continue
			}
			nameLine = x.line
			if it.isList {
				s.Name = name
			} else if name != it.name {
				l.errLine(x.line, k, "is %q but the entry's key is %q; remove name or make them equal", name, it.name)
			}
		case "command":
			l.str(x, k, &s.Command)
			cmdLine = x.line
		case "args":
			l.strList(x, k, &s.Args)
		case "env", "envs":
			s.Env, envLines, _ = l.strMap(x, k)
		case "cwd":
			l.str(x, k, &s.Cwd)
		case "url", "serverUrl", "httpUrl":
			l.str(x, k, &s.URL)
			urlLine = x.line
		case "headers":
			s.Headers, headerLines, _ = l.strMap(x, k)
		case "timeout_ms", "timeout":
			if l.int(x, k, &s.TimeoutMS) {
				timeoutLine = x.line
				if x.key == "timeout" && s.TimeoutMS > 0 && s.TimeoutMS < 1000 {
					l.warn(x.line, k, "is in milliseconds: %d ms is very short; write timeout_ms", s.TimeoutMS)
				}
			}
		case "enabled":
			l.bool(x, k, &enabled)
		case "disabled":
			l.bool(x, k, &disabled)
		case "prefix":
			var v string
			if l.str(x, k, &v) {
				prefix = &v
				if !prefixChars.MatchString(v) {
					l.errLine(x.line, k, "may hold only letters, digits, '_', '-' and '.'")
				}
			}
		case "tools":
			l.section(x, k, []string{"include", "exclude"}, func(y entry, k string) bool {
				var dst *[]string
				switch y.key {
				case "include":
					dst = &s.Tools.Include
				case "exclude":
					dst = &s.Tools.Exclude
				default:
					return false
				}
				if l.strList(y, k, dst) {
					for i, g := range *dst {
						if _, err := path.Match(g, ""); err != nil || g == "" {
							l.errLine(y.line, fmt.Sprintf("%s[%d]", k, i), "%q is not a valid glob pattern (path.Match syntax)", g)
						}
					}
				}
				return true
			})
		case "restart":
			if l.str(x, k, &s.Restart) && s.Restart != "on-failure" && s.Restart != "never" {
				l.errLine(x.line, k, "must be on-failure or never, not %q", truncate(s.Restart, 40))
			}
		case "type":
			if l.str(x, k, &typ) {
				typLine = x.line
			}
		}
	}
	s.Enabled = enabled && !disabled

	// Name.
	switch {
	case s.Name == "" && it.isList:
		l.errLine(it.line, join(p, "name"), "required")
	case !serverName.MatchString(s.Name):
		line := nameLine
		if line == 0 {
			line = it.line
		}
		l.errLine(line, join(p, "name"), "%q may hold only letters, digits, '_' and '-'", truncate(s.Name, 40))
	}
	if prefix != nil {
		s.Prefix = *prefix
	} else {
		s.Prefix = s.Name
	}
	s.Source = fmt.Sprintf("%s:%d", l.file, it.line)

	// Expansion of ${VAR} (and "~/" for paths).
	x := func(field string, v string, line int) string {
		return l.expand(s.Name, field, join(p, field), v, line)
	}
	s.Command = expandHome(x("command", s.Command, cmdLine), l.home)
	s.Cwd = expandHome(x("cwd", s.Cwd, it.line), l.home)
	s.URL = x("url", s.URL, urlLine)
	for i, a := range s.Args {
		s.Args[i] = l.expand(s.Name, fmt.Sprintf("args[%d]", i), fmt.Sprintf("%s.args[%d]", p, i), a, it.line)
	}
	for _, k := range sortedKeys(s.Env) {
		s.Env[k] = x("env."+k, s.Env[k], envLines[k])
		if k == "" || strings.ContainsAny(k, "=\x00") {
			l.errLine(envLines[k], join(p, "env"), "%q is not a valid environment variable name", k)
		}
	}
	for _, k := range sortedKeys(s.Headers) {
		s.Headers[k] = x("headers."+k, s.Headers[k], headerLines[k])
		if k == "" || strings.ContainsAny(k, " :\r\n\x00") || strings.ContainsAny(s.Headers[k], "\r\n\x00") {
			l.errLine(headerLines[k], join(p, "headers."+k), "is not a valid HTTP header")
		}
	}
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}

	// Command or URL, and the declared transport.
	switch {
	case s.Command != "" && s.URL != "":
		l.errLine(it.line, p, "has both command and url; give exactly one")
	case s.Command == "" && s.URL == "":
		l.errLine(it.line, p, "needs command (a local server) or url (a remote one)")
	case s.URL != "":
		if msg := checkHTTPURL(s.URL); msg != "" {
			l.errLine(urlLine, join(p, given["url"]), "%s", msg)
		}
	}
	if s.TimeoutMS < 0 || s.TimeoutMS > maxTimeoutMS {
		l.errLine(timeoutLine, join(p, given["timeout_ms"]), "must be between 0 (the gateway default) and %d ms", maxTimeoutMS)
	}
	if typ != "" {
		t, ok := transports[typ]
		switch {
		case !ok:
			l.errLine(typLine, join(p, "type"), "must be stdio, http, sse, streamable-http or streamableHttp, not %q", truncate(typ, 40))
		case t == "stdio" && s.URL != "" && s.Command == "":
			l.errLine(typLine, join(p, "type"), "is stdio but the entry has a url; stdio needs command")
		case t != "stdio" && s.Command != "" && s.URL == "":
			l.errLine(typLine, join(p, "type"), "is %s but the entry has a command; %s needs url", typ, typ)
		default:
			s.Transport = t
		}
	}
	if s.Args == nil && given["args"] != "" {
		s.Args = []string{}
	}
	return s, len(l.errs) == nerr
}

package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Limits checked by validate.
const (
	maxTimeoutMS   = 24 * 60 * 60 * 1000 // 24 h, for every *_timeout_ms
	maxRetries     = 10
	maxRecencyDays = 36500
	maxMaxResults  = 100
	maxHTTPLimit   = 1_000_000 // max_sessions, max_streams, max_connections and the per-caller ones
)

var separatorChars = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// maxEntryName bounds gateway.entry_name: Claude Code's mcp__ENTRY__
// prefix must leave a tool name room within 64 characters.
const maxEntryName = 32

var entryName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// profileName is what a profile may be called: it is a path segment of
// its HTTP paths (/p/NAME/mcp).
var profileName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validateProfiles checks gateway.profiles and gateway.profile.
func (l *loader) validateProfiles() {
	g := l.cfg.Gateway
	seen := map[string]bool{}
	var names []string // the valid ones
	for i, p := range g.Profiles {
		key := fmt.Sprintf("gateway.profiles[%d]", i)
		switch {
		case p.Name == "":
			l.errAt(key, "needs name: what --profile and the HTTP paths /p/NAME/... call it")
		case !profileName.MatchString(p.Name):
			l.errAt(key+".name", "must be 1 to 64 letters, digits, '_' or '-' (it is a URL path segment), not %q", truncate(p.Name, 40))
		case seen[p.Name]:
			l.errAt(key+".name", "%s is given twice", p.Name)
		default:
			names = append(names, p.Name)
		}
		seen[p.Name] = true
		l.patterns(key+".include", p.Include)
		l.patterns(key+".exclude", p.Exclude)
	}
	if g.Profile != "" && !seen[g.Profile] {
		msg := "names no profile of gateway.profiles"
		switch s := Suggest(g.Profile, names); {
		case s != "":
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		case len(names) > 0:
			msg += " (" + strings.Join(names, ", ") + ")"
		default:
			msg += " (it has none)"
		}
		l.errAt("gateway.profile", "%q %s", truncate(g.Profile, 40), msg)
	}
}

// validate checks the effective configuration. Each error is placed where
// the offending value came from: the file and line, the environment
// variable or the flag.
func (l *loader) validate() {
	c := l.cfg
	oneOf := func(key, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			l.errAt(key, "must be %s, not %q", orList(allowed), truncate(v, 40))
		}
	}
	between := func(key string, v, lo, hi int) {
		if v < lo || v > hi {
			l.errAt(key, "must be between %d and %d, got %d", lo, hi, v)
		}
	}

	if !isEnvName(c.OpenAI.APIKeyEnv) {
		l.errAt("openai.api_key_env", "must be an environment variable name such as OPENAI_API_KEY, not %q", truncate(c.OpenAI.APIKeyEnv, 40))
	}
	if msg := checkHTTPURL(c.OpenAI.BaseURL); msg != "" {
		l.errAt("openai.base_url", "%s", msg)
	}
	between("request.timeout_ms", c.Request.TimeoutMS, 1, maxTimeoutMS)
	between("request.max_retries", c.Request.MaxRetries, 0, maxRetries)

	if p, ok := c.ModelProfiles[ProfileAnswer]; !ok || strings.TrimSpace(p.Model) == "" {
		l.errAt("model_profiles.answer.model", "required: the answer profile needs a model")
	}
	for _, name := range profileNames {
		p, ok := c.ModelProfiles[name]
		if !ok {
			continue
		}
		if p.ReasoningEffort != "" {
			oneOf("model_profiles."+name+".reasoning_effort", p.ReasoningEffort, "none", "minimal", "low", "medium", "high", "xhigh")
		}
		if p.Verbosity != "" {
			oneOf("model_profiles."+name+".verbosity", p.Verbosity, "low", "medium", "high")
		}
	}

	between("policy.max_citations", c.Policy.MaxCitations, 1, 10)
	oneOf("policy.system.source", c.Policy.System.Source, "builtin", "file")
	oneOf("policy.system.merge", c.Policy.System.Merge, "replace", "prepend", "append")
	if c.Policy.System.Source == "file" && c.Policy.System.Path == "" {
		l.errAt("policy.system.path", "required when policy.system.source is file")
	}

	between("search.defaults.recency_days", c.Search.Defaults.RecencyDays, 1, maxRecencyDays)
	between("search.defaults.max_results", c.Search.Defaults.MaxResults, 1, maxMaxResults)
	for i, d := range c.Search.Defaults.Domains {
		if strings.TrimSpace(d) == "" || strings.ContainsAny(d, " \t/") {
			l.errAt("search.defaults.domains", "item %d (%q) is not a domain name such as example.com", i, truncate(d, 40))
		}
	}

	g := c.Gateway
	if !separatorChars.MatchString(g.Separator) {
		l.errAt("gateway.separator", "must be non-empty and hold only letters, digits, '_', '.' and '-', not %q", truncate(g.Separator, 40))
	}
	oneOf("gateway.strict_names", g.StrictNames, "auto", "true", "false")
	oneOf("gateway.tools_mode", g.ToolsMode, "auto", "full", "lazy")
	if !entryName.MatchString(g.EntryName) {
		l.errAt("gateway.entry_name", "must be 1 to %d letters, digits, '_' or '-' (the name of the gateway's entry in clients' configurations), not %q", maxEntryName, truncate(g.EntryName, 40))
	}
	l.validateProfiles()
	between("gateway.default_timeout_ms", g.DefaultTimeoutMS, 1, maxTimeoutMS)
	between("gateway.startup_timeout_ms", g.StartupTimeoutMS, 1, maxTimeoutMS)
	between("gateway.start_limit_ms", g.StartLimitMS, 1, maxTimeoutMS)
	between("gateway.first_start_wait_ms", g.FirstStartWaitMS, 0, maxTimeoutMS)
	between("gateway.http.session_idle_timeout_ms", g.HTTP.SessionIdleTimeoutMS, 0, maxTimeoutMS)
	between("gateway.http.session_buffer_bytes", g.HTTP.SessionBufferBytes, 64<<10, 1<<30)
	between("gateway.http.max_sessions", g.HTTP.MaxSessions, 1, maxHTTPLimit)
	between("gateway.http.max_streams", g.HTTP.MaxStreams, 1, maxHTTPLimit)
	between("gateway.http.max_connections", g.HTTP.MaxConnections, 0, maxHTTPLimit)
	between("gateway.http.max_sessions_per_identity", g.HTTP.MaxSessionsPerIdentity, 0, maxHTTPLimit)
	between("gateway.http.max_connections_per_source", g.HTTP.MaxConnectionsPerSource, 0, maxHTTPLimit)
	if msg := checkListen(g.HTTP.Listen); msg != "" {
		l.errAt("gateway.http.listen", "%s", msg)
	}
	for i, o := range g.HTTP.AllowedOrigins {
		if o != "*" && checkHTTPURL(o) != "" {
			l.errAt("gateway.http.allowed_origins", "item %d (%q) must be an origin such as https://app.example.com, or *", i, truncate(o, 60))
		}
	}
	oneOf("gateway.trust", g.Trust, "pin", "approve", "off")
	oneOf("gateway.redact", g.Redact, "off", "results")
	oneOf("gateway.confirm", g.Confirm, "off", "destructive")
	between("gateway.audit.max_bytes", g.Audit.MaxBytes, 64<<10, 1<<30)
	between("gateway.audit.keep", g.Audit.Keep, 1, 100)
	if g.HTTP.AuthTokenEnv != "" && !isEnvName(g.HTTP.AuthTokenEnv) {
		l.errAt("gateway.http.auth_token_env", "must be an environment variable name, not %q", truncate(g.HTTP.AuthTokenEnv, 40))
	}
	if g.HTTP.StateKeyEnv != "" && !isEnvName(g.HTTP.StateKeyEnv) {
		l.errAt("gateway.http.state_key_env", "must be an environment variable name, not %q", truncate(g.HTTP.StateKeyEnv, 40))
	}
	if r := g.HTTP.Replica; r != "" && !isReplicaName(r) {
		l.errAt("gateway.http.replica", "must be 1 to 63 letters, digits, '-' or '_', not %q", truncate(r, 70))
	}
	if msg := checkHTTPURL(g.Registry.URL); msg != "" {
		l.errAt("gateway.registry.url", "%s", msg)
	}
	between("gateway.registry.timeout_ms", g.Registry.TimeoutMS, 1, maxTimeoutMS)
	l.validateTeams()
	l.upstreamCallers()
}

// orList writes "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// checkHTTPURL returns "" when s is an absolute http or https URL with a
// host, and otherwise what is wrong, without echoing s (it may hold a token).
func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "must be an http or https URL, not empty"
	case err != nil:
		return "must be an http or https URL; it does not parse"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Host == "":
		return "must be an http or https URL with a host"
	}
	return ""
}

// CheckRedirectURI returns "" when s can be an OAuth redirect URI that
// `mcp-gateway login` listens on: http (the loopback exception of OAuth for
// native apps), a loopback host, an explicit port, no fragment.
func CheckRedirectURI(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be an http URL on a loopback host; it does not parse"
	case u.Scheme != "http":
		return "must be an http URL on a loopback host (login listens there), such as http://127.0.0.1:7777/callback"
	case !IsLoopbackHost(u.Hostname()):
		return fmt.Sprintf("must be on a loopback host (127.0.0.1, [::1] or localhost), not %q", truncate(u.Hostname(), 40))
	case u.Port() == "":
		return "needs a port, such as http://127.0.0.1:7777/callback"
	case u.User != nil || u.Fragment != "" || u.RawQuery != "":
		return "must have no user, query or fragment"
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port must be a number 1..65535, not %q", truncate(u.Port(), 20))
	}
	return ""
}

// IsLoopbackHost reports whether host (a name or an IP address, without a
// port; brackets allowed) names this machine's loopback interface.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkListen returns "" when s is host:port with a numeric port.
func checkListen(s string) string {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Sprintf("must be host:port such as 127.0.0.1:8000, not %q", truncate(s, 60))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("port must be a number 0..65535, not %q", truncate(port, 20))
	}
	return ""
}

// isReplicaName reports whether name can name a replica in a sealed
// session id (gateway.http.replica): a host name's label, or '_'.
func isReplicaName(name string) bool {
	if len(name) > 63 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return name != ""
}

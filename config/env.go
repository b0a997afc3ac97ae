package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// applyEnv overlays the environment variables of docs/configuration.md. A variable that
// is unset or empty changes nothing. A malformed value is an *Error naming
// the variable; an out-of-range one is reported by validate, also naming it.
func (l *loader) applyEnv() {
	c := l.cfg
	get := func(name string) (string, bool) {
		v, ok := l.env(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	set := func(name, key string) {
		l.src.Env = append(l.src.Env, name)
		l.origin[key] = origin{env: name}
	}
	str := func(name, key string, dst *string) {
		if v, ok := get(name); ok {
			*dst = v
			set(name, key)
		}
	}
	integer := func(name, key string, dst *int) {
		v, ok := get(name)
		if !ok {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			l.errs = append(l.errs, &Error{Key: name, Msg: fmt.Sprintf("must be an integer (for %s), got %q", key, truncate(v, 40))})
			return
		}
		*dst = n
		set(name, key)
	}
	millis := func(name, key string, dst *int) {
		v, ok := get(name)
		if !ok {
			return
		}
		ms, err := parseMillis(v)
		if err != nil {
			l.errs = append(l.errs, &Error{Key: name, Msg: fmt.Sprintf("%v (for %s)", err, key)})
			return
		}
		*dst = ms
		set(name, key)
	}
	profile := func(name, key string, field func(*Profile) *string) {
		if v, ok := get(name); ok {
			p := c.ModelProfiles[ProfileAnswer]
			*field(&p) = v
			c.ModelProfiles[ProfileAnswer] = p
			set(name, key)
		}
	}

	str("OPENAI_BASE_URL", "openai.base_url", &c.OpenAI.BaseURL)
	millis("OPENAI_API_TIMEOUT", "request.timeout_ms", &c.Request.TimeoutMS)
	integer("OPENAI_MAX_RETRIES", "request.max_retries", &c.Request.MaxRetries)
	integer("SEARCH_RECENCY_DAYS", "search.defaults.recency_days", &c.Search.Defaults.RecencyDays)
	integer("SEARCH_MAX_RESULTS", "search.defaults.max_results", &c.Search.Defaults.MaxResults)
	integer("MAX_CITATIONS", "policy.max_citations", &c.Policy.MaxCitations)
	profile("MODEL_ANSWER", "model_profiles.answer.model", func(p *Profile) *string { return &p.Model })
	profile("ANSWER_EFFORT", "model_profiles.answer.reasoning_effort", func(p *Profile) *string { return &p.ReasoningEffort })
	profile("ANSWER_VERBOSITY", "model_profiles.answer.verbosity", func(p *Profile) *string { return &p.Verbosity })
	millis("DEFAULT_TIMEOUT", "gateway.default_timeout_ms", &c.Gateway.DefaultTimeoutMS)

	if v, ok := get("MCP_LINE_MODE"); ok {
		switch strings.ToLower(v) {
		case "1", "true":
			c.Gateway.LineMode = true
			set("MCP_LINE_MODE", "gateway.line_mode")
		case "0", "false":
			c.Gateway.LineMode = false
			set("MCP_LINE_MODE", "gateway.line_mode")
		default:
			l.errs = append(l.errs, &Error{Key: "MCP_LINE_MODE", Msg: fmt.Sprintf("must be 1 or 0, got %q", truncate(v, 40))})
		}
	}

	// DEBUG: 1/true on; 0/false/empty off (set but empty counts here,
	// unlike the other variables: a client config that writes DEBUG=""
	// means off); anything else on, with that file.
	if v, ok := l.env("DEBUG"); ok {
		v = strings.TrimSpace(v)
		switch strings.ToLower(v) {
		case "1", "true":
			c.Server.Debug = true
		case "0", "false", "":
			c.Server.Debug = false
		default:
			c.Server.Debug = true
			c.Server.DebugFile = v
			l.origin["server.debug_file"] = origin{env: "DEBUG"}
		}
		set("DEBUG", "server.debug")
	}
}

// parseMillis reads a positive timeout written in milliseconds ("45000") or
// as a Go duration ("45s", "1m30s").
func parseMillis(v string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("must be milliseconds or a duration such as 45s, got %q", truncate(v, 40))
	}
	if d > 0 && d < time.Millisecond {
		return 0, fmt.Errorf("must be at least 1ms, got %q", truncate(v, 40))
	}
	if d > time.Duration(maxTimeoutMS)*time.Millisecond {
		return maxTimeoutMS + 1, nil // reported as out of range by validate
	}
	return int(d.Milliseconds()), nil
}

// applyFlags overlays the command-line flags.
func (l *loader) applyFlags(f Flags) {
	c := l.cfg
	if f.Debug || f.DebugFile != "" {
		c.Server.Debug = true
		l.origin["server.debug"] = origin{flag: "--debug"}
		if f.DebugFile != "" {
			c.Server.DebugFile = f.DebugFile
			l.origin["server.debug_file"] = origin{flag: "--debug"}
		}
		l.src.CLI = append(l.src.CLI, "--debug")
	}
	if f.Listen != "" {
		c.Gateway.HTTP.Listen = f.Listen
		l.origin["gateway.http.listen"] = origin{flag: "--listen"}
		l.src.CLI = append(l.src.CLI, "--listen")
	}
	if f.Profile != "" {
		c.Gateway.Profile = f.Profile
		l.origin["gateway.profile"] = origin{flag: "--profile"}
		l.src.CLI = append(l.src.CLI, "--profile")
	}
}

// finish expands "~" in paths, makes the file's relative paths relative to
// its directory (those from flags and the environment stay the working
// directory's) and reads the API key. (No list is nil: Defaults and the
// decoder give an empty one.)
func (l *loader) finish() {
	c := l.cfg
	c.Policy.System.Path = ExpandHome(c.Policy.System.Path, l.home)
	c.Server.DebugFile = ExpandHome(c.Server.DebugFile, l.home)
	c.Gateway.Pins = ExpandHome(c.Gateway.Pins, l.home)
	c.Gateway.Audit.Path = ExpandHome(c.Gateway.Audit.Path, l.home)
	for key, p := range map[string]*string{
		"policy.system.path": &c.Policy.System.Path,
		"server.debug_file":  &c.Server.DebugFile,
		"gateway.pins":       &c.Gateway.Pins,
		"gateway.audit.path": &c.Gateway.Audit.Path,
	} {
		if l.origin[key].line > 0 {
			*p = ResolvePath(l.dir, *p)
		}
	}
	for i := range c.Gateway.Profiles {
		// A profile without include or exclude has an empty one, as
		// --show-config prints it and reads it back.
		p := &c.Gateway.Profiles[i]
		if p.Include == nil {
			p.Include = []string{}
		}
		if p.Exclude == nil {
			p.Exclude = []string{}
		}
	}
	if isEnvName(c.OpenAI.APIKeyEnv) {
		if v, ok := l.env(c.OpenAI.APIKeyEnv); ok && strings.TrimSpace(v) != "" {
			c.APIKey = strings.TrimSpace(v)
			l.src.Env = append(l.src.Env, c.OpenAI.APIKeyEnv)
		}
	}
}

package config

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// clientKeys are top-level keys of client configuration files (Claude
// Desktop, Cursor, VS Code, Claude Code) that the gateway does not use. They
// are skipped with a warning so that such a file can be passed as it is.
var clientKeys = map[string]string{
	"globalShortcut":             "a Claude Desktop setting",
	"preferences":                "a Claude Desktop setting",
	"isUsingBuiltInNodeForMcp":   "a Claude Desktop setting",
	"isDxtAutoUpdatesEnabled":    "a Claude Desktop setting",
	"inputs":                     "VS Code input prompts; ${input:...} is not supported",
	"enabledMcpjsonServers":      "a Claude Code setting",
	"disabledMcpjsonServers":     "a Claude Code setting",
	"enableAllProjectMcpServers": "a Claude Code setting",
}

var topKeys = []string{"openai", "request", "model_profiles", "policy", "search", "server", "gateway", "servers", "mcpServers"}

// top applies the document's root mapping. Top-level keys starting with
// "x-" are ignored, as in Compose files, so that they can hold YAML anchors
// for the sections that use them.
func (l *loader) top(n *yaml.Node) {
	n = l.resolve(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errLine(n.Line, "", "the file must be a mapping of sections (openai, servers, mcpServers, ...), not %s", kindName(n))
		return
	}
	es, ok := l.mapping(n, "")
	if !ok {
		return
	}
	var list, mcp []entry
	for _, e := range es {
		switch e.key {
		case "openai":
			l.openai(e)
		case "request":
			l.request(e)
		case "model_profiles":
			l.profiles(e)
		case "policy":
			l.policy(e)
		case "search":
			l.search(e)
		case "server":
			l.serverOptions(e)
		case "gateway":
			l.gateway(e)
		case "servers":
			list = append(list, e)
		case "mcpServers":
			mcp = append(mcp, e)
		case "$schema":
			// JSON schema reference of an editor; nothing to do.
		default:
			if strings.HasPrefix(e.key, "x-") {
				continue // an extension key, as in Compose files: a place for anchors
			}
			if why, ok := clientKeys[e.key]; ok {
				l.warn(e.line, e.key, "ignored by mcp-gateway (%s)", why)
				continue
			}
			l.unknown(e, "", topKeys)
		}
	}
	l.servers(list, mcp)
}

// section iterates the keys of a section mapping, reporting unknown ones.
func (l *loader) section(e entry, path string, known []string, f func(e entry, key string) bool) {
	es, ok := l.mapping(e.val, path)
	if !ok {
		return
	}
	for _, x := range es {
		if !f(x, join(path, x.key)) {
			l.unknown(x, path, known)
		}
	}
}

func (l *loader) openai(e entry) {
	c := &l.cfg.OpenAI
	l.section(e, "openai", []string{"api_key_env", "base_url"}, func(x entry, k string) bool {
		switch x.key {
		case "api_key_env":
			l.str(x, k, &c.APIKeyEnv)
		case "base_url":
			l.str(x, k, &c.BaseURL)
		case "api_key", "apiKey":
			l.errLine(x.line, k, "the API key is read only from the environment variable that openai.api_key_env names (default OPENAI_API_KEY); remove it from the file")
		default:
			return false
		}
		return true
	})
}

func (l *loader) request(e entry) {
	c := &l.cfg.Request
	l.section(e, "request", []string{"timeout_ms", "max_retries"}, func(x entry, k string) bool {
		switch x.key {
		case "timeout_ms":
			l.int(x, k, &c.TimeoutMS)
		case "max_retries":
			l.int(x, k, &c.MaxRetries)
		default:
			return false
		}
		return true
	})
}

var profileNames = []string{ProfileAnswer, ProfileAnswerDetailed, ProfileAnswerQuick}

// profiles merges model_profiles per profile and per field; a profile set to
// null is removed (it then inherits everything from answer).
func (l *loader) profiles(e entry) {
	es, ok := l.mapping(e.val, "model_profiles")
	if !ok {
		return
	}
	for _, x := range es {
		path := join("model_profiles", x.key)
		switch x.key {
		case ProfileAnswer, ProfileAnswerDetailed, ProfileAnswerQuick:
		default:
			msg := "unknown profile (the profiles are answer, answer_detailed and answer_quick)"
			if s := suggest(x.key, profileNames); s != "" {
				msg = "unknown profile (did you mean " + s + "?)"
			}
			l.errLine(x.line, path, "%s", msg)
			continue
		}
		if v := l.resolve(x.val); v != nil && isNull(v) {
			delete(l.cfg.ModelProfiles, x.key)
			l.origin[join(path, "model")] = origin{line: x.line}
			continue
		}
		p := l.cfg.ModelProfiles[x.key]
		l.section(x, path, []string{"model", "reasoning_effort", "verbosity"}, func(y entry, k string) bool {
			switch y.key {
			case "model":
				l.str(y, k, &p.Model)
			case "reasoning_effort":
				l.str(y, k, &p.ReasoningEffort)
			case "verbosity":
				l.str(y, k, &p.Verbosity)
			default:
				return false
			}
			return true
		})
		l.cfg.ModelProfiles[x.key] = p
	}
}

func (l *loader) policy(e entry) {
	c := &l.cfg.Policy
	l.section(e, "policy", []string{"max_citations", "system"}, func(x entry, k string) bool {
		switch x.key {
		case "max_citations":
			l.int(x, k, &c.MaxCitations)
		case "system":
			l.section(x, k, []string{"source", "path", "merge"}, func(y entry, k string) bool {
				switch y.key {
				case "source":
					l.str(y, k, &c.System.Source)
				case "path":
					l.str(y, k, &c.System.Path)
				case "merge":
					l.str(y, k, &c.System.Merge)
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
}

func (l *loader) search(e entry) {
	c := &l.cfg.Search.Defaults
	l.section(e, "search", []string{"defaults"}, func(x entry, k string) bool {
		if x.key != "defaults" {
			return false
		}
		l.section(x, k, []string{"recency_days", "max_results", "domains"}, func(y entry, k string) bool {
			switch y.key {
			case "recency_days":
				l.int(y, k, &c.RecencyDays)
			case "max_results":
				l.int(y, k, &c.MaxResults)
			case "domains":
				l.strList(y, k, &c.Domains)
			default:
				return false
			}
			return true
		})
		return true
	})
}

func (l *loader) serverOptions(e entry) {
	c := &l.cfg.Server
	l.section(e, "server", []string{"debug", "debug_file", "show_config_on_start"}, func(x entry, k string) bool {
		switch x.key {
		case "debug":
			l.bool(x, k, &c.Debug)
		case "debug_file":
			l.str(x, k, &c.DebugFile)
		case "show_config_on_start":
			l.bool(x, k, &c.ShowConfigOnStart)
		default:
			return false
		}
		return true
	})
}

func (l *loader) gateway(e entry) {
	c := &l.cfg.Gateway
	known := []string{"separator", "strict_names", "tools_mode", "default_timeout_ms", "startup_timeout_ms", "answer_tools", "http", "line_mode"}
	l.section(e, "gateway", known, func(x entry, k string) bool {
		switch x.key {
		case "separator":
			l.str(x, k, &c.Separator)
		case "strict_names":
			// auto | true | false; a YAML boolean is taken as written.
			n, ok := l.scalar(x.val, k, "auto, true or false")
			if !ok {
				break
			}
			var b bool
			if n.ShortTag() == "!!bool" && n.Decode(&b) == nil {
				c.StrictNames = strconv.FormatBool(b)
				l.origin[k] = origin{line: x.line}
				break
			}
			l.str(x, k, &c.StrictNames)
		case "tools_mode":
			l.str(x, k, &c.ToolsMode)
		case "default_timeout_ms":
			l.int(x, k, &c.DefaultTimeoutMS)
		case "startup_timeout_ms":
			l.int(x, k, &c.StartupTimeoutMS)
		case "answer_tools":
			l.bool(x, k, &c.AnswerTools)
		case "line_mode":
			l.bool(x, k, &c.LineMode)
		case "http":
			h := &c.HTTP
			l.section(x, k, []string{"listen", "allowed_origins", "auth_token_env", "stateless"}, func(y entry, k string) bool {
				switch y.key {
				case "listen":
					l.str(y, k, &h.Listen)
				case "allowed_origins":
					l.strList(y, k, &h.AllowedOrigins)
				case "auth_token_env":
					l.str(y, k, &h.AuthTokenEnv)
				case "stateless":
					l.bool(y, k, &h.Stateless)
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
}

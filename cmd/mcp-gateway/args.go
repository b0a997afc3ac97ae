package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/importer"
)

const usage = `mcp-gateway: one MCP entry for many MCP servers, plus cited web answers.

Usage:
  mcp-gateway --stdio [--config PATH] [--debug [PATH]] [--profile NAME]
                                                         serve MCP on stdin/stdout (what clients run)
  mcp-gateway --transport http [--listen ADDR] [--config PATH]
                                                         serve MCP (Streamable HTTP, SSE) and REST over HTTP (docs/http.md);
                                                         each profile also at /p/NAME/mcp, /p/NAME/sse, /p/NAME/mcp/tools, ...
  mcp-gateway --show-config [--config PATH]              effective config with its sources, JSON, to stderr
  mcp-gateway tools [--config PATH] [--json] [--wait D] [--profile NAME]
                                                         start the backends, list every tool a client sees
  mcp-gateway tools --changes [--json] [--wait D]        the tool and prompt definitions withheld until approved,
                                                         each with its diff, and the definitions the scanner flags
  mcp-gateway approve SERVER [NAME] --digest HEX        accept the withheld definition of that digest, as
                                                         tools --changes shows it (docs/trust.md)
  mcp-gateway approve SERVER --all                       accept everything SERVER withholds now, unreviewed
  mcp-gateway dashboard [--listen ADDR]                  a page on loopback (default 127.0.0.1:8300): backends, tools,
                                                         withheld changes with Approve, recent audit entries,
                                                         registry search and Add (docs/registry.md)
  mcp-gateway call NAME [JSON_ARGS] [--config PATH] [--profile NAME]
                                                         call one tool through the gateway, print the result
  mcp-gateway status [--config PATH] [--json] [--wait D] start every backend; state, start time, tools, errors
  mcp-gateway import --from CLIENT|PATH [--write PATH [--force] [--replace-client]] [--no-sandbox]
                                                         gateway YAML from a client's MCP servers (docs/clients.md)
  mcp-gateway search [TEXT] [--json]                     servers in the MCP registry whose name holds TEXT (docs/registry.md)
  mcp-gateway add NAME[@VERSION] [--remote | --package npm|pypi|oci] [--name N] [--env K=V] [--header K=V]
                  [--var K=V] [--yes]                    add a registry server to the configuration (asks first)
  mcp-gateway login NAME [--config PATH]                 sign in to a remote server (OAuth, in the browser)
  mcp-gateway logout NAME [--config PATH]                forget the sign-in of a remote server
  mcp-gateway logout NAME --subject S [--config PATH]    sign person S out of a per_user_login server (their
                                                         stored tokens deleted and revoked; docs/teams.md)
  mcp-gateway secret set|get|rm NAME | secret ls         the secrets a server's ${secret:NAME} refers to, in the OS
                                                         keychain or an encrypted file (docs/secrets.md); set reads
                                                         the value from the terminal (not shown) or stdin
  mcp-gateway policy check --subject S [--group G] [--scope S] [--claim K=V] [--client-id C] [--issuer I] TOOL
                                                         explain what the policy decides for a caller (docs/teams.md)
  mcp-gateway --help | --version

Flags:
  --config PATH    configuration file (default ~/.config/mcp-gateway/config.yaml)
  --debug [PATH]   debug logs on stderr, and also to PATH when given
  --show-config    print the effective configuration to stderr (with --stdio, then serve)
  --listen ADDR    HTTP listen address (default 127.0.0.1:8000)
  --profile NAME   serve, list or call only the tools of profile NAME (gateway.profiles);
                   over HTTP, the paths without /p/NAME
  --wait D         tools, status: wait at most D (30s, 2m) for backends still starting;
                   by default gateway.startup_timeout_ms, longer for an npx/uvx download
                   (Ctrl-C stops waiting)
  --json           machine-readable output for tools and status
  --changes        tools: what the trust layer withholds, with diffs, instead of the tools
  --digest HEX     approve: the definition whose digest starts with HEX, 32 hex digits or more
                   (what was reviewed); approve SERVER NAME refuses without it
  --all            approve: every definition SERVER withholds now, whatever it is
  --from CLIENT    claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, or a file
  --write PATH     write the imported YAML to PATH (--force to overwrite)
  --replace-client back up the client's file, then leave one entry in it: this gateway on PATH
  --no-sandbox     import: no sandbox block (by default each local server gets best_effort
                   with the paths in its args and env, or off if one
                   cannot be granted, docs/sandbox.md)

Environment: OPENAI_API_KEY, OPENAI_BASE_URL, DEFAULT_TIMEOUT, MCP_LINE_MODE, DEBUG, ...
(see docs/configuration.md). Logs go to stderr; stdout carries protocol only.
`

// invocation is a parsed command line.
type invocation struct {
	command    string // "serve", "tools", "call", "status", "import", "login", "logout", "show-config"
	stdio      bool
	transport  string
	configPath string
	debug      bool
	debugFile  string
	showConfig bool
	json       bool
	help       bool
	version    bool
	listen     string
	profile    string // --profile: gateway.profile
	// wait bounds how long tools and status wait for backends still
	// starting (--wait); 0: gateway.startup_timeout_ms (waitStarts).
	wait     time.Duration
	changes  bool   // tools --changes
	digest   string // approve --digest
	all      bool   // approve --all
	name     string // approve's NAME
	callName string
	callArgs string
	server   string // login, logout
	subject  string // logout --subject: a person's per_user_login sign-in
	secret   string // secret's sub-command: set, get, ls, rm (NAME in name)
	// import
	from          string
	write         string
	force         bool
	replaceClient bool
	noSandbox     bool
	// policy check: the caller whose identity is checked
	who policyCaller
}

// policyCaller is the identity `policy check` asks about.
type policyCaller struct {
	given                     bool // any of the flags below
	auth                      string
	subject, issuer, clientID string
	groups, scopes, claims    []string
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// parseArgs parses the command line. --debug takes an optional path: the
// next argument when it does not start with "-" and is not a sub-command's
// positional argument.
func parseArgs(args []string) (*invocation, error) {
	inv := &invocation{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) { return flagValue(args, &i, name, val, hasVal) }
		var err error
		switch name {
		case "-h", "--help", "-help":
			inv.help = true
		case "--version", "-version", "-v":
			inv.version = true
		case "--stdio":
			inv.stdio = true
		case "--transport":
			inv.transport, err = value()
		case "--listen":
			inv.listen, err = value()
		case "--profile":
			inv.profile, err = value()
		case "--config", "-c":
			inv.configPath, err = value()
		case "--debug":
			inv.debug = true
			if hasVal {
				inv.debugFile = val
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !isCommand(args[i+1]) && inv.command == "" && len(positional) == 0 {
				i++
				inv.debugFile = args[i]
			}
		case "--show-config":
			inv.showConfig = true
		case "--json":
			inv.json = true
		case "--changes":
			inv.changes = true
		case "--digest":
			inv.digest, err = value()
		case "--all":
			inv.all = true
		case "--wait":
			var v string
			if v, err = value(); err == nil {
				inv.wait, err = parseWait(v)
			}
		case "--from":
			inv.from, err = value()
		case "--write":
			inv.write, err = value()
		case "--force":
			inv.force = true
		case "--replace-client":
			inv.replaceClient = true
		case "--no-sandbox":
			inv.noSandbox = true
		default:
			if set := callerFlag(name); set != nil {
				var v string
				if v, err = value(); err == nil {
					inv.who.given = true
					set(&inv.who, v)
				}
				break
			}
			if strings.HasPrefix(a, "-") && a != "-" {
				return nil, usagef("unknown flag %s%s", name, didYouMean(name, flagNames))
			}
			positional = append(positional, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if inv.help || inv.version {
		return inv, nil
	}
	if len(positional) > 0 {
		inv.command = positional[0]
		rest := positional[1:]
		switch inv.command {
		case "tools", "status":
			if len(rest) > 0 {
				return nil, usagef("%s takes no arguments (got %q)", inv.command, rest[0])
			}
		case "import":
			if len(rest) > 0 {
				return nil, usagef("import takes no arguments (got %q); the client goes in --from", rest[0])
			}
			if inv.from == "" {
				return nil, usagef("import needs --from CLIENT or --from PATH (clients: %s)", importer.ClientNames())
			}
			if inv.replaceClient && inv.write == "" {
				return nil, usagef("--replace-client needs --write PATH: the client's new entry runs the gateway on that file")
			}
		case "approve":
			if len(rest) < 1 || len(rest) > 2 {
				return nil, usagef("approve needs a server name, and may name one of its tools or prompts: mcp-gateway approve SERVER [NAME]")
			}
			inv.server = rest[0]
			if len(rest) == 2 {
				inv.name = rest[1]
			}
		case "dashboard":
			if len(rest) > 0 {
				return nil, usagef("dashboard takes no arguments (got %q)", rest[0])
			}
		case "login", "logout":
			if len(rest) != 1 {
				return nil, usagef("%s needs one server name: mcp-gateway %s NAME", inv.command, inv.command)
			}
			inv.server = rest[0]
			if w := inv.who; inv.command == "logout" && w.given {
				// logout --subject S: an administrator signs one person out
				// of a per_user_login server.
				if w.subject == "" || w.issuer != "" || w.clientID != "" || w.auth != "" || w.groups != nil || w.scopes != nil || w.claims != nil {
					return nil, usagef("logout takes --subject S alone: mcp-gateway logout NAME --subject S")
				}
				inv.subject, inv.who = w.subject, policyCaller{}
			}
		case "secret":
			if err := parseSecret(inv, rest); err != nil {
				return nil, err
			}
		case "policy":
			if len(rest) != 2 || rest[0] != "check" {
				return nil, usagef("policy needs check and a tool name: mcp-gateway policy check --subject S TOOL")
			}
			inv.command, inv.callName = "policy-check", rest[1]
			switch inv.who.auth {
			case "":
				inv.who.auth = "oauth"
			case "oauth", "token", "none":
			default:
				return nil, usagef("--auth must be oauth, token or none, not %q", inv.who.auth)
			}
		case "call":
			if len(rest) == 0 {
				return nil, usagef("call needs a tool name: mcp-gateway call NAME [JSON_ARGS]")
			}
			if len(rest) > 2 {
				return nil, usagef("call takes NAME and one JSON argument object (got %d arguments)", len(rest))
			}
			inv.callName = rest[0]
			if len(rest) == 2 {
				if err := checkCallArgs(rest[1]); err != nil {
					return nil, err
				}
				inv.callArgs = rest[1]
			}
		default:
			return nil, usagef("unknown command %q%s", inv.command, didYouMean(inv.command, append(slices.Clone(commands), registryCommands...)))
		}
		if inv.stdio {
			return nil, usagef("--stdio cannot be combined with %s", inv.command)
		}
		if inv.wait != 0 && inv.command != "tools" && inv.command != "status" && inv.command != "approve" {
			return nil, usagef("--wait belongs to tools, status and approve")
		}
		if inv.changes && inv.command != "tools" {
			return nil, usagef("--changes belongs to tools")
		}
		if (inv.digest != "" || inv.all) && inv.command != "approve" {
			return nil, usagef("--digest and --all belong to approve")
		}
		if inv.listen != "" && inv.command != "dashboard" {
			return nil, usagef("--listen belongs to --transport http and dashboard")
		}
		if inv.profile != "" && inv.command != "tools" && inv.command != "call" {
			return nil, usagef("--profile belongs to --stdio, --transport http, tools and call")
		}
		if inv.command != "import" && (inv.from != "" || inv.write != "" || inv.force || inv.replaceClient || inv.noSandbox) {
			return nil, usagef("--from, --write, --force, --replace-client and --no-sandbox belong to import")
		}
		if inv.command != "policy-check" && inv.who.given {
			return nil, usagef("%s belong to policy check", callerFlagList())
		}
		return inv, nil
	}
	switch {
	case inv.transport == "http":
		if inv.stdio {
			return nil, usagef("--stdio cannot be combined with --transport http")
		}
		inv.command = "serve-http"
	case inv.transport != "" && inv.transport != "stdio":
		return nil, usagef("unknown transport %q (want stdio or http)", inv.transport)
	case inv.stdio || inv.transport == "stdio":
		inv.stdio = true
		inv.command = "serve"
	case inv.showConfig:
		inv.command = "show-config"
	default:
		return nil, usagef("nothing to do: pass --stdio to serve MCP, or a command (tools, call, status)")
	}
	return inv, nil
}

// callerFlags are policy check's identity flags, each with what it sets.
var callerFlags = []struct {
	name string
	set  func(w *policyCaller, v string)
}{
	{"--subject", func(w *policyCaller, v string) { w.subject = v }},
	{"--issuer", func(w *policyCaller, v string) { w.issuer = v }},
	{"--client-id", func(w *policyCaller, v string) { w.clientID = v }},
	{"--group", func(w *policyCaller, v string) { w.groups = append(w.groups, v) }},
	{"--scope", func(w *policyCaller, v string) { w.scopes = append(w.scopes, v) }},
	{"--claim", func(w *policyCaller, v string) { w.claims = append(w.claims, v) }},
	{"--auth", func(w *policyCaller, v string) { w.auth = v }},
}

// callerFlag is what the identity flag name sets, or nil.
func callerFlag(name string) func(*policyCaller, string) {
	for _, f := range callerFlags {
		if f.name == name {
			return f.set
		}
	}
	return nil
}

// callerFlagList is "--subject, …, --claim and --auth".
func callerFlagList() string {
	names := make([]string, len(callerFlags))
	for i, f := range callerFlags {
		names[i] = f.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// commands are the sub-commands; flagNames the flags, in their long form
// (policy check's identity flags among them).
var (
	commands  = []string{"tools", "call", "status", "import", "login", "logout", "approve", "dashboard", "policy", "secret"}
	flagNames = func() []string {
		names := []string{"--help", "--version", "--stdio", "--transport", "--listen", "--config", "--debug",
			"--show-config", "--json", "--changes", "--digest", "--all", "--wait", "--from", "--write", "--force", "--replace-client", "--no-sandbox", "--profile"}
		for _, f := range callerFlags {
			names = append(names, f.name)
		}
		return names
	}()
)

func isCommand(s string) bool { return slices.Contains(commands, s) }

// parseSecret reads `secret set|get|rm NAME` and `secret ls`.
func parseSecret(inv *invocation, rest []string) error {
	const forms = "mcp-gateway secret set|get|rm NAME, or mcp-gateway secret ls"
	if len(rest) == 0 {
		return usagef("secret needs set, get, ls or rm: %s", forms)
	}
	inv.secret, rest = rest[0], rest[1:]
	switch inv.secret {
	case "ls":
		if len(rest) > 0 {
			return usagef("secret ls takes no arguments (got %q)", rest[0])
		}
		return nil
	case "set", "get", "rm":
	default:
		return usagef("unknown secret command %q%s: %s", inv.secret, didYouMean(inv.secret, []string{"set", "get", "ls", "rm"}), forms)
	}
	switch {
	case len(rest) == 0:
		return usagef("secret %s needs the secret's name: mcp-gateway secret %s NAME", inv.secret, inv.secret)
	case len(rest) > 1 && inv.secret == "set":
		return usagef("secret set takes the name only: the value is read from the terminal (not shown) or from stdin, never from the command line, which the shell's history and the process list keep")
	case len(rest) > 1:
		return usagef("secret %s takes one name (got %d arguments)", inv.secret, len(rest))
	case !config.IsSecretName(rest[0]):
		return usagef("%q is not a secret's name: 1 to 200 letters, digits, '.', '_' and '-' (add names them SERVER.VAR)", rest[0])
	}
	inv.name = rest[0]
	return nil
}

// checkCallArgs checks call's JSON_ARGS: one JSON object (blank is {}),
// saying in JSON's terms what it was instead.
func checkCallArgs(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return usagef("JSON_ARGS is not valid JSON (%v): give the tool's arguments as one object, such as '{\"path\":\"/tmp\"}'", err)
	}
	kind := "an object"
	switch v.(type) {
	case map[string]any:
		return nil
	case []any:
		kind = "an array"
	case string:
		kind = "a string"
	case float64:
		kind = "a number"
	case bool:
		kind = "true or false"
	case nil:
		kind = "null"
	}
	return usagef("JSON_ARGS must be a JSON object of the tool's arguments, such as '{\"path\":\"/tmp\"}', not %s", kind)
}

// didYouMean is "; did you mean X?" for the one of known closest to word
// (config.Suggest), or "".
func didYouMean(word string, known []string) string {
	switch s := config.Suggest(word, known); {
	case s == "":
		return ""
	case strings.HasPrefix(s, "-"):
		return "; did you mean " + s + "?"
	default:
		return fmt.Sprintf("; did you mean %q?", s)
	}
}

// parseWait reads --wait: a Go duration (30s, 2m) or milliseconds.
func parseWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		ms, err2 := strconv.Atoi(v)
		if err2 != nil {
			return 0, usagef("--wait takes a duration such as 30s or 2m, not %q", v)
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if d <= 0 {
		return 0, usagef("--wait must be positive, not %q", v)
	}
	return d, nil
}

// flagValue is the value of the flag name at args[*i]: val when it was
// given as name=val (hasVal), else the next word, which it consumes.
func flagValue(args []string, i *int, name, val string, hasVal bool) (string, error) {
	if hasVal {
		return val, nil
	}
	if *i+1 >= len(args) {
		return "", usagef("%s needs a value", name)
	}
	*i++
	return args[*i], nil
}

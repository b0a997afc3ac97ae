package main

import (
	"slices"
	"strings"
)

// registryInvocation is a parsed `search` or `add` command line.
type registryInvocation struct {
	command    string // "search" or "add"
	configPath string
	text       string // search's TEXT
	name       string // add's NAME
	version    string // add's VERSION ("" for the latest)
	serverName string // --name
	via        string // --remote: "remote"; --package: npm, pypi or oci
	yes        bool
	json       bool
	env        map[string]string // --env NAME=VALUE
	headers    map[string]string // --header NAME=VALUE
	vars       map[string]string // --var NAME=VALUE
}

// registryCommand reports whether args are a search or add command line:
// its first word that is not a flag (or --config's value) names one.
func registryCommand(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--config" || a == "-c" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a == "search" || a == "add"
	}
	return false
}

// parseRegistryArgs parses `search TEXT` and `add NAME[@VERSION]` with
// their flags.
func parseRegistryArgs(args []string) (*registryInvocation, error) {
	inv := &registryInvocation{env: map[string]string{}, headers: map[string]string{}, vars: map[string]string{}}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) { return flagValue(args, &i, name, val, hasVal) }
		pair := func(into map[string]string) error {
			// --env NAME=VALUE: the value is the next word, NAME=VALUE.
			v := args[i][len(name):]
			if v == "" {
				if i+1 >= len(args) {
					return usagef("%s needs NAME=VALUE", name)
				}
				i++
				v = args[i]
			} else {
				v = v[1:] // --env=NAME=VALUE
			}
			k, kv, ok := strings.Cut(v, "=")
			if !ok || k == "" {
				return usagef("%s takes NAME=VALUE, not %q", name, v)
			}
			into[k] = kv
			return nil
		}
		var err error
		switch name {
		case "--config", "-c":
			inv.configPath, err = value()
		case "--name":
			inv.serverName, err = value()
		case "--remote":
			if inv.via != "" {
				return nil, usagef("--remote and --package choose one way to run the server; give one")
			}
			inv.via = "remote"
		case "--package":
			if inv.via != "" {
				return nil, usagef("--remote and --package choose one way to run the server; give one")
			}
			inv.via, err = value()
			if err == nil && !slices.Contains([]string{"npm", "pypi", "oci"}, inv.via) {
				return nil, usagef("--package must be npm, pypi or oci, not %q", inv.via)
			}
		case "--env":
			err = pair(inv.env)
		case "--header":
			err = pair(inv.headers)
		case "--var":
			err = pair(inv.vars)
		case "--yes", "-y":
			inv.yes = true
		case "--json":
			inv.json = true
		default:
			if strings.HasPrefix(a, "-") {
				return nil, usagef("unknown flag %s%s", name, didYouMean(name, registryFlags))
			}
			positional = append(positional, a)
		}
		if err != nil {
			return nil, err
		}
	}
	inv.command, positional = positional[0], positional[1:]
	switch inv.command {
	case "search":
		if len(positional) > 1 {
			return nil, usagef("search takes one TEXT (quote it if it has spaces), got %d words", len(positional))
		}
		if len(positional) == 1 {
			inv.text = positional[0]
		}
		if inv.serverName != "" || inv.via != "" || inv.yes || len(inv.env)+len(inv.headers)+len(inv.vars) > 0 {
			return nil, usagef("--name, --remote, --package, --env, --header, --var and --yes belong to add")
		}
	case "add":
		if len(positional) != 1 {
			return nil, usagef("add needs one server name: mcp-gateway add NAME[@VERSION] (mcp-gateway search TEXT finds names)")
		}
		inv.name, inv.version, _ = strings.Cut(positional[0], "@")
		if inv.name == "" || strings.Contains(inv.version, "@") {
			return nil, usagef("add takes NAME[@VERSION], such as io.github.owner/server@1.2.3, not %q", positional[0])
		}
		if inv.json {
			return nil, usagef("--json belongs to search")
		}
	}
	return inv, nil
}

// registryCommands are the commands registryCommand dispatches (for
// "did you mean").
var registryCommands = []string{"search", "add"}

var registryFlags = []string{"--config", "--name", "--remote", "--package", "--env", "--header", "--var", "--yes", "--json"}

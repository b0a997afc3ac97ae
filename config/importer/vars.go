package importer

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// varStyle is how a client expands "${...}" in a server's values.
type varStyle int

const (
	// varsNone: the client expands nothing (Claude Desktop, Codex); every
	// "${" is literal and is written "$${" for the gateway.
	varsNone varStyle = iota
	// varsShell: ${VAR} and ${VAR:-default} (Claude Code's .mcp.json), the
	// gateway's own syntax, and ${env:VAR}.
	varsShell
	// varsEditor: ${env:VAR}, ${userHome}, ${workspaceFolder}, ... and, in
	// VS Code, ${input:ID} (Cursor, VS Code, Windsurf).
	varsEditor
	// varsDollar: $VAR and ${VAR} (Gemini CLI); $VAR becomes ${VAR}.
	varsDollar
)

// varContext translates one file's values to the gateway's ${VAR} syntax.
type varContext struct {
	client    *Client
	home      string
	workspace string // the project directory of a project file, or ""
}

// editorVars are the editors' predefined variables that need an open
// workspace or file.
var editorVars = map[string]bool{
	"userHome": true, "workspaceFolder": true, "workspaceRoot": true, "workspaceFolderBasename": true,
	"file": true, "fileBasename": true, "fileDirname": true, "relativeFile": true, "cwd": true,
}

var (
	varRef     = regexp.MustCompile(`\$\{([^}]*)\}`)
	bareVarRef = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	notIdent   = regexp.MustCompile(`[^A-Za-z0-9_]+`)
)

// translate rewrites s for the gateway and says what it changed or could
// not carry over.
func (v varContext) translate(s string) (string, []string) {
	if v.client.Vars == varsDollar {
		s = bareVarRef.ReplaceAllString(s, "$${$1}")
	}
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if v.client.Vars == varsNone {
		return strings.ReplaceAll(s, "${", "$${"), nil
	}
	var notes []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		expr := ref[2 : len(ref)-1]
		name, _, _ := strings.Cut(expr, ":-")
		if v.client.Vars == varsEditor {
			switch {
			case expr == "userHome" && v.home != "":
				return v.home
			case (expr == "workspaceFolder" || expr == "workspaceRoot") && v.workspace != "":
				return v.workspace
			case expr == "workspaceFolderBasename" && v.workspace != "":
				return filepath.Base(v.workspace)
			case expr == "pathSeparator" || expr == "/":
				return string(filepath.Separator)
			case editorVars[expr]:
				notes = append(notes, fmt.Sprintf("%s has no value outside the editor: kept as literal text", ref))
				return "$" + ref
			case strings.HasPrefix(expr, "input:"):
				id := strings.TrimPrefix(expr, "input:")
				env := envVarName(id, "INPUT_")
				notes = append(notes, fmt.Sprintf("%s prompted for input %q: set %s in the gateway's environment", v.client.Title, id, env))
				return "${" + env + "}"
			}
		}
		if envName.MatchString(strings.TrimPrefix(name, "env:")) {
			return ref // the gateway's syntax: ${VAR}, ${VAR:-default}, ${env:VAR}
		}
		notes = append(notes, fmt.Sprintf("%s is not expanded by mcp-gateway: kept as literal text", ref))
		return "$" + ref
	})
	return out, notes
}

// envVarName makes s an environment variable name for a value that import
// moves to the gateway's environment: upper case, runs of other characters
// as "_", and prefix before a name that would start with a digit or be
// empty.
func envVarName(s, prefix string) string {
	env := strings.ToUpper(strings.Trim(notIdent.ReplaceAllString(s, "_"), "_"))
	if env == "" || env[0] >= '0' && env[0] <= '9' {
		env = prefix + env
	}
	return env
}

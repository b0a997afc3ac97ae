package importer

import (
	"path/filepath"
	"runtime"
	"strings"
)

// Client is an MCP client whose configuration can be imported.
type Client struct {
	Name  string // as given to --from
	Title string // for people
	// ServersKey is the top-level key of its server map: "mcpServers",
	// "servers" (VS Code) or "mcp_servers" (Codex).
	ServersKey string
	TOML       bool // Codex
	// Typed is whether the client's entries say their transport in "type"
	// ("stdio" for a command): the gateway's entry written by
	// ReplaceClient says it too (Claude Code shows no command without it).
	Typed bool
	// Vars is how the client expands "${...}" in values; see varContext.
	Vars varStyle
}

// The clients, by --from name.
var (
	claudeDesktop = &Client{Name: "claude-desktop", Title: "Claude Desktop", ServersKey: "mcpServers", Vars: varsNone}
	claudeCode    = &Client{Name: "claude-code", Title: "Claude Code", ServersKey: "mcpServers", Typed: true, Vars: varsShell}
	cursor        = &Client{Name: "cursor", Title: "Cursor", ServersKey: "mcpServers", Typed: true, Vars: varsEditor}
	vscode        = &Client{Name: "vscode", Title: "VS Code", ServersKey: "servers", Typed: true, Vars: varsEditor}
	windsurf      = &Client{Name: "windsurf", Title: "Windsurf", ServersKey: "mcpServers", Vars: varsEditor}
	codex         = &Client{Name: "codex", Title: "Codex", ServersKey: "mcp_servers", TOML: true, Vars: varsNone}
	// gemini is Gemini CLI: ~/.gemini/settings.json and the project's
	// .gemini/settings.json; "url" is an SSE server, "httpUrl" a
	// Streamable HTTP one.
	gemini = &Client{Name: "gemini", Title: "Gemini CLI", ServersKey: "mcpServers", Vars: varsDollar}
	// genericJSON is a file of an unknown client with an mcpServers map:
	// the ${...} forms the gateway knows are kept.
	genericJSON = &Client{Name: "file", Title: "a client file", ServersKey: "mcpServers", Vars: varsShell}
)

// Clients are the names --from accepts besides a path.
var Clients = []*Client{claudeDesktop, claudeCode, cursor, vscode, windsurf, codex, gemini}

// ClientNames are the names of Clients, for messages: "a, b or c".
func ClientNames() string {
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return joinOr(names)
}

// location is one file a client reads.
type location struct {
	path string
	// workspace is the project directory of a project file ("" for a
	// user-level file): what ${workspaceFolder} means there.
	workspace string
}

// locate returns the named client and its documented files on opts.GOOS,
// user-level first, or nil when opts.From is not a client name.
func locate(opts Options) (*Client, []location) {
	goos := opts.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	home := opts.Home
	env := func(k, def string) string {
		if v, ok := opts.Env(k); ok && v != "" {
			return v
		}
		return def
	}
	// appConfig is where desktop apps keep their settings.
	appConfig := func() string {
		switch goos {
		case "darwin":
			return filepath.Join(home, "Library", "Application Support")
		case "windows":
			return env("APPDATA", filepath.Join(home, "AppData", "Roaming"))
		}
		return env("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	}
	user := func(p ...string) location { return location{path: filepath.Join(p...)} }
	project := func(p ...string) location {
		return location{path: filepath.Join(append([]string{opts.Dir}, p...)...), workspace: opts.Dir}
	}
	switch opts.From {
	case claudeDesktop.Name:
		return claudeDesktop, []location{user(appConfig(), "Claude", "claude_desktop_config.json")}
	case claudeCode.Name:
		// ~/.claude.json holds the user scope and, under projects.<dir>, the
		// local scope; .mcp.json in the project is the project scope.
		return claudeCode, []location{{path: filepath.Join(home, ".claude.json"), workspace: opts.Dir}, project(".mcp.json")}
	case cursor.Name:
		return cursor, []location{user(home, ".cursor", "mcp.json"), project(".cursor", "mcp.json")}
	case vscode.Name:
		return vscode, []location{user(appConfig(), "Code", "User", "mcp.json"), project(".vscode", "mcp.json")}
	case windsurf.Name:
		return windsurf, []location{user(home, ".codeium", "windsurf", "mcp_config.json")}
	case codex.Name:
		return codex, []location{user(env("CODEX_HOME", filepath.Join(home, ".codex")), "config.toml"), project(".codex", "config.toml")}
	case gemini.Name:
		return gemini, []location{user(home, ".gemini", "settings.json"), project(".gemini", "settings.json")}
	}
	return nil, nil
}

// detect tells a file's client by its name, then its contents.
func detect(path string, data []byte) *Client {
	base := strings.ToLower(filepath.Base(path))
	parent := strings.ToLower(filepath.Base(filepath.Dir(path)))
	switch {
	case strings.HasSuffix(base, ".toml"):
		return codex
	case base == "claude_desktop_config.json":
		return claudeDesktop
	case base == ".claude.json" || base == ".mcp.json":
		return claudeCode
	case base == "mcp_config.json":
		return windsurf
	case parent == ".cursor":
		return cursor
	case parent == ".gemini":
		return gemini
	case parent == ".vscode" || parent == "user" && base == "mcp.json":
		return vscode
	}
	// A VS Code file has "servers" and no "mcpServers", or, for
	// settings.json, "mcp".
	if (hasTopKey(data, "servers") || hasTopKey(data, "mcp")) && !hasTopKey(data, "mcpServers") {
		return vscode
	}
	return genericJSON
}

// Package registry reads the official MCP registry (API v0.1) and turns
// one of its entries, a server.json, into a gateway server entry: what
// `mcp-gateway search` and `mcp-gateway add` do (docs/registry.md).
//
// The types are the registry's own, small: only the members this package
// reads, named as server.json (schema 2025-12-11) names them. The
// registry's Go module (github.com/modelcontextprotocol/registry) has them
// too, but brings its server's dependencies (an HTTP framework, a
// database driver) into the gateway's build for a dozen structs.
package registry

// ServerResponse is one item of the API: a server.json and what the
// registry says about it.
type ServerResponse struct {
	Server ServerJSON   `json:"server"`
	Meta   ResponseMeta `json:"_meta"`
}

// ResponseMeta is the registry's own metadata of an item.
type ResponseMeta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is the official registry's record of a version.
type Official struct {
	Status      string `json:"status,omitempty"` // active | deprecated | deleted
	PublishedAt string `json:"publishedAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	IsLatest    bool   `json:"isLatest,omitempty"`
}

// ServerList is a page of GET /v0.1/servers (or of a server's versions).
type ServerList struct {
	Servers  []ServerResponse `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor,omitempty"`
		Count      int    `json:"count,omitempty"`
	} `json:"metadata"`
}

// ServerJSON is a server.json.
type ServerJSON struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source lives.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run the server locally.
type Package struct {
	RegistryType         string          `json:"registryType"` // npm | pypi | oci | nuget | mcpb
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport, or a remote: stdio,
// streamable-http or sse, with a URL template and headers for the last two.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may have to give.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"` // string | number | boolean | filepath
	Value       string   `json:"value,omitempty"`  // fixed, with {var} substitution
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// Argument is a command-line argument: positional, or named (--flag value).
type Argument struct {
	Input
	Variables  map[string]Input `json:"variables,omitempty"`
	Type       string           `json:"type"` // positional | named
	Name       string           `json:"name,omitempty"`
	ValueHint  string           `json:"valueHint,omitempty"`
	IsRepeated bool             `json:"isRepeated,omitempty"`
}

// KeyValueInput is an environment variable or a header.
type KeyValueInput struct {
	Input
	Variables map[string]Input `json:"variables,omitempty"`
	Name      string           `json:"name"`
}

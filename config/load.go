package config

import "io"

// LoadOptions says where Load reads from. Every field is optional except Env.
type LoadOptions struct {
	// Path is the --config file; "" means the default path, where a missing
	// file is fine (a missing explicit Path is an error).
	Path string
	// Home is the user's home directory, for the default path and "~".
	Home string
	// Env looks up an environment variable (os.LookupEnv in production).
	Env func(string) (string, bool)
	// Flags are the command-line settings, applied last.
	Flags Flags
}

// Flags are the command-line settings that overlay the configuration. A zero
// field was not given.
type Flags struct {
	Debug     bool   // --debug
	DebugFile string // --debug PATH
	Listen    string // --listen ADDR
}

// Sources records where the effective configuration came from, as printed by
// --show-config.
type Sources struct {
	Defaults bool     `json:"defaults"`
	YAML     *string  `json:"yaml"` // the file read, or null
	Env      []string `json:"env"`  // the variables that changed something, sorted
	CLI      []string `json:"cli"`  // the flags that changed something, e.g. "--debug"
}

// Error is a configuration error. It names the file, line and key when they
// are known: "config.yaml:12: servers[1].restart: must be on-failure or never".
// The command line exits 2 on it.
type Error struct {
	File string // "" for an environment variable or flag
	Line int    // 0 when unknown
	Key  string // dotted path, or the environment variable's name
	Msg  string
}

func (e *Error) Error() string {
	panic("TODO(config helper)")
}

// Load builds the effective configuration: defaults, then the YAML/JSON file,
// then the environment, then opts.Flags, then validation. Every problem is an
// *Error (possibly joined with errors.Join when there are several).
func Load(opts LoadOptions) (*Config, *Sources, error) {
	panic("TODO(config helper)")
}

// WriteShowConfig writes the --show-config document
// {"version","sources","effective"} as two-space indented JSON. The API key
// appears only as "api_key": "set" or "unset" inside "openai".
func WriteShowConfig(w io.Writer, version string, c *Config, s *Sources) error {
	panic("TODO(config helper)")
}

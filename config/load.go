package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// LoadOptions says where Load reads from. Every field is optional except Env.
type LoadOptions struct {
	// Path is the --config file; "" means the default path, where a missing
	// file is fine (a missing explicit Path is an error).
	Path string
	// Data, when not nil, is the file's contents, read instead of the
	// file; Path then only names it in messages.
	Data []byte
	// Home is the user's home directory, for the default path and "~".
	// With Home and Path both empty no file is read.
	Home string
	// Env looks up an environment variable (os.LookupEnv in production).
	// A nil Env is an empty environment. A variable set to the empty string
	// counts as unset for the overrides (it still expands to "" in ${VAR}).
	Env func(string) (string, bool)
	// Flags are the command-line settings, applied last.
	Flags Flags
}

// Flags are the command-line settings that overlay the configuration. A zero
// field was not given.
type Flags struct {
	Debug     bool   // --debug
	DebugFile string // --debug PATH (implies Debug)
	Listen    string // --listen ADDR
	Profile   string // --profile NAME
}

// Sources records where the effective configuration came from, as printed by
// --show-config.
type Sources struct {
	Defaults bool     `json:"defaults"`
	YAML     *string  `json:"yaml"` // the file read, or null
	Env      []string `json:"env"`  // the variables that were applied, sorted (the API key's variable by name only)
	CLI      []string `json:"cli"`  // the flags that changed something, e.g. "--debug"
	// Profiles says, for each answer tool's profile, each field's effective
	// value and where it came from: "gpt-5.5 (default)", "o3
	// (config.yaml:4)", "gpt-5.5 (from answer: env MODEL_ANSWER)".
	Profiles map[string]map[string]string `json:"profiles,omitempty"`
	// Sandboxes says, for each local server whose sandbox is on (or that
	// turns off gateway.sandbox), each key's effective value and whether
	// it is the server's own or inherited: "enforce (config.yaml:7)",
	// "none (from gateway.sandbox: config.yaml:30)".
	Sandboxes map[string]map[string]string `json:"sandboxes,omitempty"`
	// Warnings are problems that did not stop the load: a client-config key
	// the gateway does not use, an unset ${VAR}, and the like. Each names
	// the file, line and key, never a secret value.
	Warnings []string `json:"warnings,omitempty"`
	// File is what was read of YAML, when Load read it (not when it was
	// given LoadOptions.Data): the live reload's start.
	File *FileState `json:"-"`
}

// Error is a configuration error. It names the file, line and key when they
// are known: "config.yaml:12: servers[1].restart: must be on-failure or never".
// The command line exits 2 on it.
//
// A Key made only of upper-case letters, digits and underscores, with no
// File, is an environment variable ("environment variable DEFAULT_TIMEOUT:
// ..."); a Key starting with "-" is a command-line flag ("flag --listen: ...").
type Error struct {
	File string // "" for an environment variable or flag
	Line int    // 0 when unknown
	Key  string // dotted path, or the environment variable's name
	Msg  string
}

// Error formats the error as "file:line: key: msg", leaving out the parts
// that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		switch {
		case e.File == "" && isEnvName(e.Key) && strings.ToUpper(e.Key) == e.Key:
			b.WriteString("environment variable ")
		case strings.HasPrefix(e.Key, "-"):
			b.WriteString("flag ")
		}
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors returns the *Error values in err, which Load returns either alone
// or joined with errors.Join. It returns nil when err holds none.
func Errors(err error) []*Error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	if e := (*Error)(nil); errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}

// DefaultPath is the configuration file read when --config is not given:
// ~/.config/mcp-gateway/config.yaml under home.
func DefaultPath(home string) string {
	return filepath.Join(home, ".config", "mcp-gateway", "config.yaml")
}

// TokenDir is where the OAuth sign-ins of remote servers are kept, one file
// per server (mcp-gateway login): ~/.config/mcp-gateway/tokens under home.
func TokenDir(home string) string {
	return filepath.Join(home, ".config", "mcp-gateway", "tokens")
}

// PinsFile is the file the approved tool and prompt definitions are kept
// in (docs/trust.md): gateway.pins when set, else beside the configuration
// file that was read (the default path when none was), named after it:
// config.yaml's pins are config.pins.json.
func PinsFile(c *Config, src *Sources, home string) string {
	if c.Gateway.Pins != "" {
		return c.Gateway.Pins
	}
	file := DefaultPath(home)
	if src != nil && src.YAML != nil {
		file = *src.YAML
	}
	base := filepath.Base(file)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return filepath.Join(filepath.Dir(file), base+".pins.json")
}

// SnapshotDir is where the backends' snapshots are kept (gateway.snapshots):
// mcp-gateway/snapshots in the user's cache directory under home, as the
// OS has it — $XDG_CACHE_HOME or ~/.cache on Linux and other Unix systems,
// ~/Library/Caches on macOS, %LocalAppData% on Windows. getenv looks up
// environment variables.
func SnapshotDir(home, goos string, getenv func(string) (string, bool)) string {
	return userDir(home, goos, getenv, "XDG_CACHE_HOME", ".cache", "Caches", "snapshots")
}

// userDir is mcp-gateway/sub in one of the user's directories under home,
// as the OS has it: %LocalAppData% on Windows, ~/Library/darwin on macOS,
// else $xdg (when absolute) or ~/unix.
func userDir(home, goos string, getenv func(string) (string, bool), xdg, unix, darwin, sub string) string {
	var base string
	switch goos {
	case "windows":
		if v, ok := getenv("LocalAppData"); ok && filepath.IsAbs(v) {
			base = v
		} else {
			base = filepath.Join(home, "AppData", "Local")
		}
	case "darwin", "ios":
		base = filepath.Join(home, "Library", darwin)
	default:
		if v, ok := getenv(xdg); ok && filepath.IsAbs(v) {
			base = v
		} else {
			base = filepath.Join(home, unix)
		}
	}
	return filepath.Join(base, "mcp-gateway", sub)
}

// maxFileSize bounds the configuration file Load reads.
const maxFileSize = 4 << 20

// maxErrors bounds how many errors Load reports at once.
const maxErrors = 20

// Load builds the effective configuration: defaults, then the YAML/JSON file,
// then the environment, then opts.Flags, then validation. Every problem is an
// *Error (possibly joined with errors.Join when there are several, ordered by
// line). On error the returned *Config and *Sources are nil.
//
// Objects merge deeply; a list or null in the file replaces the default. A
// JSON file such as Claude Desktop's claude_desktop_config.json is read as it
// is. Load reads no environment variable except through opts.Env.
func Load(opts LoadOptions) (*Config, *Sources, error) {
	l := &loader{
		env:    opts.Env,
		home:   opts.Home,
		cfg:    Defaults(),
		src:    &Sources{Defaults: true, Env: []string{}, CLI: []string{}},
		origin: map[string]origin{},
		keys:   map[reflect.Type]structKeys{},
	}
	if l.env == nil {
		l.env = func(string) (string, bool) { return "", false }
	}

	path, explicit := opts.Path, opts.Path != ""
	if !explicit && opts.Home != "" {
		path = DefaultPath(opts.Home)
	}
	if explicit {
		path = ExpandHome(path, opts.Home)
	}
	if path != "" {
		data, err := opts.Data, error(nil)
		if data == nil {
			data, l.src.File, err = readFile(path, maxFileSize)
		}
		switch {
		case err == nil:
			p := path
			l.src.YAML = &p
			l.file = path
			if abs, err := filepath.Abs(path); err == nil {
				l.dir = filepath.Dir(abs)
			}
			l.decodeFile(data)
		case !explicit && errors.Is(err, fs.ErrNotExist):
			// A missing default file is fine.
		default:
			l.errs = append(l.errs, &Error{File: path, Msg: err.Error()})
		}
	}
	// The later stages run even after file errors, so that one run reports
	// every problem; a value that failed to decode kept its default.
	l.applyEnv()
	l.applyFlags(opts.Flags)
	l.finish()
	l.validate()
	if len(l.errs) > 0 {
		return nil, nil, l.joined()
	}
	slices.Sort(l.src.Env)
	l.src.Env = slices.Compact(l.src.Env)
	l.src.Profiles = l.profileSources()
	return l.cfg, l.src, nil
}

// origin says where an effective value came from, for error messages.
type origin struct {
	line int    // > 0: the file, at this line
	key  string // with line: the key as written ("servers[0].timeout")
	env  string // the environment variable
	flag string // the command-line flag
}

// loader carries one Load call's state.
type loader struct {
	env    func(string) (string, bool)
	home   string
	file   string
	dir    string // the file's directory, absolute: what relative paths in it are relative to
	cfg    *Config
	src    *Sources
	errs   []*Error
	origin map[string]origin // dotted key → where its value came from
	// serverSections are the `servers:` and `mcpServers:` entries, which
	// are decoded after the rest of the file.
	serverSections []entry
	steps          int // node visits, bounding alias expansion
	stepLimit      int // the file's own nodes plus maxSteps
	tooDeep        bool
	// keys caches keysOf by struct type: a file with thousands of
	// servers would otherwise reflect over the same types for each.
	keys map[reflect.Type]structKeys
	// upstream is where each server's upstream_auth is (upstream.go).
	upstream []origin
}

// errAt records an error for key, placed where the key's value came from.
func (l *loader) errAt(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o, ok := l.origin[key]
	switch {
	case ok && o.env != "":
		l.errs = append(l.errs, &Error{Key: o.env, Msg: fmt.Sprintf("%s (for %s)", msg, key)})
	case ok && o.flag != "":
		l.errs = append(l.errs, &Error{Key: o.flag, Msg: msg})
	case ok && o.line > 0:
		l.errs = append(l.errs, &Error{File: l.file, Line: o.line, Key: key, Msg: msg})
	default:
		l.errs = append(l.errs, &Error{Key: key, Msg: msg})
	}
}

// errLine records an error in the file at line.
func (l *loader) errLine(line int, key, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// warn records a warning in the file at line, formatted as an Error is.
func (l *loader) warn(line int, key, format string, args ...any) {
	w := Error{File: l.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	l.src.Warnings = append(l.src.Warnings, w.Error())
}

// joined returns the errors sorted by line (errors without a line last, in
// the order found), at most maxErrors of them, joined.
func (l *loader) joined() error {
	errs := slices.Clone(l.errs)
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Compare(sortLine(a.Line), sortLine(b.Line))
	})
	if len(errs) == 1 {
		return errs[0]
	}
	if len(errs) > maxErrors {
		more := len(errs) - maxErrors
		errs = append(errs[:maxErrors], &Error{File: l.file, Msg: fmt.Sprintf("too many errors (%d more not shown)", more)})
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// sortLine puts errors without a line after all others.
func sortLine(line int) int {
	if line <= 0 {
		return math.MaxInt
	}
	return line
}

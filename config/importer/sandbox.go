package importer

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// confine gives a local server the sandbox import writes for it
// (docs/sandbox.md#servers-added-by-import): best_effort, with the
// absolute (or "~/") paths among its arguments that exist on this machine
// in both read and write, since import cannot tell which the server
// writes. A remote server runs elsewhere and gets none.
func (e *Entry) confine(opts Options) {
	if e.Server.Command == "" || e.Server.URL != "" {
		return
	}
	var paths []string
	for _, a := range e.Server.Args {
		p := argPath(a, opts.Home)
		if p == "" || slices.Contains(paths, p) {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if what := exposes(p, opts); what != "" {
			e.Notes = append(e.Notes, "sandbox: "+p+" is not granted: it would expose "+what+" (docs/sandbox.md)")
			continue
		}
		paths = append(paths, p)
	}
	e.Server.Sandbox = config.Sandbox{Mode: config.SandboxBestEffort, Read: paths, Write: slices.Clone(paths)}
}

// argPath is the absolute path an argument names ("/p", "~/p", or
// "--flag=/p"), cleaned, or "". An argument with a variable ("${VAR}",
// or a literal "$$") is not read: import cannot know its value.
func argPath(a, home string) string {
	if strings.HasPrefix(a, "-") {
		_, v, ok := strings.Cut(a, "=")
		if !ok {
			return ""
		}
		a = v
	}
	if strings.Contains(a, "$") {
		return ""
	}
	if strings.HasPrefix(a, "~/") || strings.HasPrefix(a, `~\`) {
		if home == "" {
			return ""
		}
		a = config.ExpandHome(a, home)
	}
	if !filepath.IsAbs(a) {
		return ""
	}
	return filepath.Clean(a)
}

// exposes names what granting p would expose, or "": the sandbox refuses
// to start a server whose read or write is the filesystem's root, the
// home directory or one above it, or holds (or is inside) the gateway's
// own directories, so import leaves such a path out.
func exposes(p string, opts Options) string {
	sep := string(filepath.Separator)
	if filepath.Dir(p) == p {
		return "the whole filesystem"
	}
	if h := filepath.Clean(opts.Home); opts.Home != "" && (p == h || strings.HasPrefix(h, p+sep)) {
		return "the whole home directory"
	}
	goos := cmp.Or(opts.GOOS, runtime.GOOS)
	env := opts.Env
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	var own []string
	if opts.Home != "" {
		own = append(own, filepath.Dir(config.DefaultPath(opts.Home)), filepath.Dir(config.SandboxDir(opts.Home, goos, env)))
	}
	if opts.Self.Config != "" {
		own = append(own, opts.Self.Config)
	}
	for _, g := range own {
		if g = filepath.Clean(g); g == p || strings.HasPrefix(g, p+sep) || strings.HasPrefix(p, g+sep) {
			return "the gateway's " + g
		}
	}
	return ""
}

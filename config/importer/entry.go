package importer

import (
	"cmp"
	"maps"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// entry translates the raw entry's values for the gateway.
func (r rawEntry) entry(v varContext) Entry {
	e := Entry{Key: r.key, Source: r.source, Notes: slices.Clone(r.notes)}
	tr := func(s string) string {
		out, notes := v.translate(s)
		for _, n := range notes {
			if !slices.Contains(e.Notes, n) {
				e.Notes = append(e.Notes, n)
			}
		}
		return out
	}
	trMap := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out[k] = tr(m[k])
		}
		return out
	}
	s := config.Server{
		Command:   tr(r.command),
		Cwd:       tr(r.cwd),
		URL:       tr(r.url),
		Env:       trMap(r.env),
		Headers:   trMap(r.headers),
		TimeoutMS: r.timeoutMS,
		Enabled:   r.enabled,
		Tools:     config.ToolFilter{Include: r.include, Exclude: r.exclude},
	}
	if !r.oauth.empty() {
		s.OAuth = r.oauth.config(r.key, v.client, tr, func(n string) { e.Notes = append(e.Notes, n) })
	}
	for k, h := range r.envHeaders {
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[k] = h
	}
	for _, a := range r.args {
		s.Args = append(s.Args, tr(a))
	}
	if t, ok := config.TransportOf(r.transport); ok {
		s.Transport = t
	} else if r.transport != "" {
		e.Notes = append(e.Notes, "type "+r.transport+" is not one mcp-gateway knows: left out")
	}
	// A relative cwd or command path in a project file is the project's:
	// the client runs the server there. Elsewhere it is kept, and the
	// gateway reads it from its own file's directory.
	if v.workspace != "" {
		s.Cwd = config.ResolvePath(v.workspace, s.Cwd)
		if config.HasDir(s.Command) {
			s.Command = config.ResolvePath(cmp.Or(s.Cwd, v.workspace), s.Command)
		}
	} else if config.IsRelative(s.Cwd) || config.HasDir(s.Command) && config.IsRelative(s.Command) {
		e.Notes = append(e.Notes, "a relative path: mcp-gateway reads it from the directory of the file it loads (docs/configuration.md#paths)")
	}
	// A type that contradicts the entry would make config.Load fail.
	if s.Transport == "stdio" && s.Command == "" || s.Transport != "stdio" && s.Transport != "" && s.URL == "" {
		s.Transport = ""
	}
	e.Server = s
	return e
}

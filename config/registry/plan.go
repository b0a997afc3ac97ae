package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// How a server is run, as `add --remote` / `--package` choose it.
const (
	ViaRemote = "remote"
	ViaNPM    = "npm"
	ViaPyPI   = "pypi"
	ViaOCI    = "oci"
)

// Question is an input add needs a value for.
type Question struct {
	Kind  string // "environment variable", "header", "argument", "variable"
	Name  string // its name: the variable, header, argument or {variable}
	Flag  string // how to give it on the command line: --env NAME=VALUE
	Input Input
}

// Options say how to build the entry.
type Options struct {
	// Via is "" (the first the entry offers of a remote, npm, PyPI, OCI)
	// or one of ViaRemote, ViaNPM, ViaPyPI, ViaOCI.
	Via string
	// Name is the server's name in the configuration; secrets are named
	// NAME.VAR after it.
	Name string
	// Env, Headers and Vars are the values given on the command line:
	// environment variables, headers, and arguments or {variables}.
	Env, Headers, Vars map[string]string
	// Ask asks the user for a required input nobody gave, on a terminal;
	// nil when there is none (the input is then missing).
	Ask func(Question) (string, error)
}

// Plan is an entry made into a server: the configuration entry to write
// and the secrets to store.
type Plan struct {
	Server config.Server
	// Via is how it runs: ViaRemote, ViaNPM, ViaPyPI or ViaOCI.
	Via string
	// Secrets are the values of isSecret inputs by their secret name
	// (SERVER.VAR); the entry refers to each as ${secret:SERVER.VAR}.
	Secrets map[string]string
	// Notes are said to the user and kept as the entry's comment.
	Notes []string
}

// MissingError lists the required inputs that have no value.
type MissingError struct{ Needed []Question }

func (e *MissingError) Error() string {
	var b strings.Builder
	b.WriteString("required inputs have no value (no terminal to ask on); give them as:")
	for _, q := range e.Needed {
		fmt.Fprintf(&b, "\n  %s", q.Flag)
		var what []string
		if q.Input.Description != "" {
			what = append(what, q.Input.Description)
		}
		if q.Input.IsSecret {
			what = append(what, "secret: kept in the secret store, not in the file")
		}
		if len(q.Input.Choices) > 0 {
			what = append(what, "one of "+strings.Join(q.Input.Choices, ", "))
		}
		if len(what) > 0 {
			fmt.Fprintf(&b, "  (%s)", strings.Join(what, "; "))
		}
	}
	return b.String()
}

// ErrUnsupported is matched (errors.Is) by the error of an entry that
// offers no way to run it that add knows.
var ErrUnsupported = errors.New("unsupported")

// unsupported is such an error: its message says it all.
type unsupported struct{ msg string }

func (e *unsupported) Error() string        { return e.msg }
func (e *unsupported) Is(target error) bool { return target == ErrUnsupported }

func unsupportedf(format string, args ...any) error {
	return &unsupported{fmt.Sprintf(format, args...)}
}

// SecretRef is how a configuration value refers to a stored secret.
func SecretRef(name string) string { return "${secret:" + name + "}" }

// SecretName is the name of server's secret for the input called input.
func SecretName(server, input string) string { return server + "." + input }

// exactVersion is a version that names one release: not "latest", not a
// range.
var exactVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

func isExact(v string) bool {
	if !exactVersion.MatchString(v) || strings.EqualFold(v, "latest") {
		return false
	}
	for _, p := range strings.Split(v, ".") {
		if p == "x" || p == "X" {
			return false
		}
	}
	return true
}

// Build makes the entry r into a server entry named opts.Name.
func Build(r *ServerResponse, opts Options) (*Plan, error) {
	s := r.Server
	b := &builder{opts: opts, plan: &Plan{Secrets: map[string]string{}}}
	switch st := r.Meta.Official; {
	case st != nil && st.Status == "deleted":
		return nil, fmt.Errorf("%s@%s is marked deleted in the registry", s.Name, s.Version)
	case st != nil && st.Status == "deprecated":
		b.plan.Notes = append(b.plan.Notes, "the registry marks this version deprecated")
	}
	remote, pkg, err := choose(s, opts.Via)
	if err != nil {
		return nil, err
	}
	p := b.plan
	p.Server = config.Server{Name: opts.Name, Enabled: true, Trust: "approve", From: "registry " + s.Name + "@" + s.Version}
	if remote != nil {
		p.Via = ViaRemote
		b.remote(*remote)
	} else {
		p.Via = pkg.RegistryType
		p.Server.FileSHA256 = pkg.FileSHA256
		if err := b.pkg(*pkg); err != nil {
			return nil, err
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	if len(b.missing) > 0 {
		return nil, &MissingError{Needed: b.missing}
	}
	return p, nil
}

// choose picks what to run: a remote (streamable-http before sse), else
// an npm, PyPI or OCI package with the stdio transport, in that order,
// unless via names one.
func choose(s ServerJSON, via string) (*Transport, *Package, error) {
	var offers []string
	pickRemote := func() *Transport {
		for _, typ := range []string{"streamable-http", "sse"} {
			for i := range s.Remotes {
				if s.Remotes[i].Type == typ {
					return &s.Remotes[i]
				}
			}
		}
		return nil
	}
	pickPackage := func(typ string) (*Package, error) {
		for i := range s.Packages {
			p := &s.Packages[i]
			if p.RegistryType != typ {
				continue
			}
			if t := p.Transport.Type; t != "" && t != "stdio" {
				return nil, unsupportedf("its %s package %s serves %s, which add does not run (only stdio packages)", typ, p.Identifier, t)
			}
			return p, nil
		}
		return nil, nil
	}
	for _, r := range s.Remotes {
		offers = append(offers, "remote "+r.Type)
	}
	for _, p := range s.Packages {
		o := p.RegistryType + " package " + p.Identifier
		switch p.RegistryType {
		case ViaNPM, ViaPyPI, ViaOCI:
		case "mcpb":
			o += " (mcpb bundles are not supported yet: add does not download and verify them)"
		case "nuget":
			o += " (nuget is not supported)"
		default:
			o += fmt.Sprintf(" (unknown registryType %q)", p.RegistryType)
		}
		offers = append(offers, o)
	}
	none := func(what string) error {
		if len(offers) == 0 {
			return unsupportedf("%s@%s offers no remote and no package", s.Name, s.Version)
		}
		return unsupportedf("%s@%s has %s; it offers: %s", s.Name, s.Version, what, strings.Join(offers, "; "))
	}
	switch via {
	case ViaRemote:
		if r := pickRemote(); r != nil {
			return r, nil, nil
		}
		return nil, nil, none("no streamable-http or sse remote")
	case ViaNPM, ViaPyPI, ViaOCI:
		p, err := pickPackage(via)
		if err != nil {
			return nil, nil, err
		}
		if p == nil {
			return nil, nil, none("no " + via + " package")
		}
		return nil, p, nil
	case "":
	default:
		return nil, nil, fmt.Errorf("--package must be npm, pypi or oci, not %q", via)
	}
	if r := pickRemote(); r != nil {
		return r, nil, nil
	}
	for _, typ := range []string{ViaNPM, ViaPyPI, ViaOCI} {
		if p, err := pickPackage(typ); err == nil && p != nil {
			return nil, p, nil
		}
	}
	return nil, nil, none("nothing add can run")
}

type builder struct {
	opts    Options
	plan    *Plan
	missing []Question
	err     error
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// remote fills in a remote server: its URL with {variables} substituted
// (no secret may go into a URL) and its headers.
func (b *builder) remote(t Transport) {
	s := &b.plan.Server
	s.Transport = "http"
	if t.Type == "sse" {
		s.Transport = "sse"
	}
	url, ok := b.substitute(t.URL, t.Variables, false)
	if !ok {
		return
	}
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		b.fail("the remote's URL %q is not an http or https URL", url)
		return
	}
	s.URL = url
	for _, h := range t.Headers {
		if v, ok := b.keyValue("header", h, b.opts.Headers, "--header"); ok {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[h.Name] = v
		}
	}
}

// pkg fills in a local server: the runtime's command line, the exact
// version, arguments and environment.
func (b *builder) pkg(p Package) error {
	s := &b.plan.Server
	if p.Identifier == "" {
		return fmt.Errorf("its %s package has no identifier", p.RegistryType)
	}
	var spec string
	switch p.RegistryType {
	case ViaNPM, ViaPyPI:
		if !isExact(p.Version) {
			return fmt.Errorf("its %s package %s has version %q, not one exact version: add runs only an exact version", p.RegistryType, p.Identifier, p.Version)
		}
		spec = p.Identifier + "@" + p.Version
		if p.RegistryType == ViaPyPI {
			spec = p.Identifier + "==" + p.Version
		}
	case ViaOCI:
		spec = p.Identifier
		last := spec[strings.LastIndex(spec, "/")+1:]
		if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
			if !isExact(p.Version) {
				return fmt.Errorf("its oci image %s has neither a tag nor an exact version (%q)", p.Identifier, p.Version)
			}
			spec += ":" + p.Version
		} else if tag := last[strings.LastIndexAny(last, ":@")+1:]; !strings.Contains(last, "@") && !isExact(tag) {
			return fmt.Errorf("its oci image %s is not tagged with one exact version", p.Identifier)
		}
	}
	want := map[string]string{ViaNPM: "npx", ViaPyPI: "uvx", ViaOCI: "docker"}[p.RegistryType]
	if p.RuntimeHint != "" && p.RuntimeHint != want {
		b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("the entry hints runtime %s; add runs %s packages with %s", p.RuntimeHint, p.RegistryType, want))
	}
	runtimeArgs := b.args(p.RuntimeArguments)
	packageArgs := b.args(p.PackageArguments)
	var env []string
	for _, e := range p.EnvironmentVariables {
		if v, ok := b.keyValue("environment variable", e, b.opts.Env, "--env"); ok {
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[e.Name] = v
			env = append(env, e.Name)
		}
	}
	s.Command = want
	switch p.RegistryType {
	case ViaNPM:
		s.Args = append(runtimeArgs, "-y", spec)
		if slices.Contains(runtimeArgs, "-y") || slices.Contains(runtimeArgs, "--yes") {
			s.Args = append(runtimeArgs, spec)
		}
	case ViaPyPI:
		s.Args = append(runtimeArgs, spec)
	case ViaOCI:
		s.Args = append([]string{"run", "-i", "--rm"}, runtimeArgs...)
		// docker passes a variable into the container only when told.
		slices.Sort(env)
		for _, name := range env {
			s.Args = append(s.Args, "-e", name)
		}
		s.Args = append(s.Args, spec)
	}
	s.Args = append(s.Args, packageArgs...)
	return nil
}

// args resolves runtimeArguments or packageArguments to command-line
// words.
func (b *builder) args(as []Argument) []string {
	var out []string
	for i, a := range as {
		key := a.ValueHint
		if a.Type == "named" {
			key = strings.TrimLeft(a.Name, "-")
		}
		if key == "" {
			key = fmt.Sprintf("arg%d", i+1)
		}
		v, ok := b.value(Question{Kind: "argument", Name: key, Flag: "--var " + key + "=VALUE", Input: a.Input}, a.Variables, b.opts.Vars)
		switch {
		case a.Type == "named" && ok:
			out = append(out, a.Name, v)
		case ok:
			out = append(out, v)
		}
		if a.IsRepeated && ok {
			b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("argument %s may be repeated; add gave it once: edit args to repeat it", key))
		}
	}
	return out
}

// keyValue resolves an environment variable or header.
func (b *builder) keyValue(kind string, kv KeyValueInput, given map[string]string, flag string) (string, bool) {
	return b.value(Question{Kind: kind, Name: kv.Name, Flag: flag + " " + kv.Name + "=VALUE", Input: kv.Input}, kv.Variables, given)
}

// value is an input's value as the configuration holds it, and whether it
// has one: its fixed value with {variables} substituted; else what was
// given, asked on the terminal (a required input) or its default (a
// required input without a terminal). A secret becomes a ${secret:…}
// reference and goes into Secrets; any other text has its "${" escaped,
// so that nothing from the registry or the user expands the gateway's own
// environment into a server.
func (b *builder) value(q Question, vars map[string]Input, given map[string]string) (string, bool) {
	in := q.Input
	if in.Value != "" {
		return b.substitute(in.Value, vars, true)
	}
	v, ok := given[q.Name]
	if !ok && in.IsRequired && b.opts.Ask != nil {
		a, err := b.opts.Ask(q)
		if err != nil {
			if b.err == nil {
				b.err = err // errors.Is finds an interruption
			}
			return "", false
		}
		if a == "" {
			a = in.Default
		}
		v, ok = a, a != ""
	}
	if !ok && in.IsRequired && in.Default != "" {
		v, ok = in.Default, true
	}
	if !ok {
		if in.IsRequired {
			b.missing = append(b.missing, q)
		}
		return "", false
	}
	if len(in.Choices) > 0 && !slices.Contains(in.Choices, v) {
		b.fail("%s %s must be one of %s, not %q", q.Kind, q.Name, strings.Join(in.Choices, ", "), v)
		return "", false
	}
	if in.IsSecret {
		name := SecretName(b.opts.Name, q.Name)
		if !secretNameChars.MatchString(name) {
			b.fail("%s %s is a secret, but %q cannot name one (1 to 200 letters, digits, '.', '_' and '-')", q.Kind, q.Name, name)
			return "", false
		}
		b.plan.Secrets[name] = v
		return SecretRef(name), true
	}
	return escape(v), true
}

// secretNameChars is what a secret's name may hold (the secret store's
// rule, docs/secrets.md).
var secretNameChars = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)

var varRef = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

// substitute replaces each {name} of template with the value of the
// variable name (an identifier no variable names stays as it is).
// secrets says whether a secret variable may be used (not in a URL).
func (b *builder) substitute(template string, vars map[string]Input, secrets bool) (string, bool) {
	ok := true
	out := varRef.ReplaceAllStringFunc(escape(template), func(m string) string {
		name := m[1 : len(m)-1]
		in, found := vars[name]
		if !found {
			return m
		}
		if in.IsSecret && !secrets {
			b.fail("{%s} is a secret in a URL, where the gateway keeps no secret: add cannot add this remote", name)
			ok = false
			return m
		}
		v, has := b.value(Question{Kind: "variable", Name: name, Flag: "--var " + name + "=VALUE", Input: in}, nil, b.opts.Vars)
		if !has && in.Default != "" {
			v, has = escape(in.Default), true
		}
		if !has {
			ok = false
			return m
		}
		return v
	})
	return out, ok && b.err == nil
}

// escape writes text so that the configuration reads it as it is: "${"
// is "$${" there.
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }

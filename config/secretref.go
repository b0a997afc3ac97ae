package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A secret reference, ${secret:NAME}, stands for a value kept in the secret
// store (config/secrets, docs/secrets.md) in a server's env, headers and
// args. Load keeps it as written; the value is put in when the server
// starts (Server.WithSecrets), for that server only, so that it is never in
// the configuration, --show-config, status or a log.

// secretScheme begins the expression of a secret reference.
const secretScheme = "secret:"

// maxSecretName bounds a secret's name.
const maxSecretName = 200

var secretName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// IsSecretName reports whether name may name a secret: 1 to 200 letters,
// digits, '.', '_' and '-' (`add` names them SERVER.VAR).
func IsSecretName(name string) bool {
	return len(name) <= maxSecretName && secretName.MatchString(name)
}

// SecretRef is the reference to the secret name, as a file writes it.
func SecretRef(name string) string { return "${" + secretScheme + name + "}" }

// checkSecretRef says what is wrong with ${secret:name}, where allowed
// tells whether the field may hold one; "" when nothing is.
func checkSecretRef(name string, allowed bool) string {
	ref := "${" + secretScheme + truncate(name, 40) + "}"
	switch {
	case !allowed:
		return ref + " may be used only in a server's env, headers and args"
	case strings.Contains(name, ":-"):
		return ref + " cannot have a default: a secret is set (mcp-gateway secret set NAME) or the server does not start"
	case !IsSecretName(name):
		return ref + fmt.Sprintf(" is not a secret's name (1 to %d letters, digits, '.', '_' and '-')", maxSecretName)
	}
	return ""
}

// secretPart is a piece of a field holding secret references: literal
// text (name "") or the reference to the secret name.
type secretPart struct {
	text string
	name string
}

// secretRefs are a server's fields that hold secret references, keyed as
// Config.shown keys them ("env.KEY", "headers.KEY", "args[2]"), each split
// into its parts. Never changed once Load made it.
type secretRefs struct {
	fields map[string][]secretPart
}

// SecretNames returns the names of the secrets the server refers to, sorted,
// each once; nil when none.
func (s Server) SecretNames() []string {
	if s.secrets == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, parts := range s.secrets.fields {
		for _, p := range parts {
			if p.name != "" {
				seen[p.name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// WithSecrets returns s with the value of each secret it refers to in
// place of the reference, looked up with get (which says why a secret is
// missing: that error, naming the field, is returned). The values are
// taken as they are: nothing in them is expanded. s itself is not
// changed; a server without references is returned as it is.
func (s Server) WithSecrets(get func(name string) (string, error)) (Server, error) {
	if s.secrets == nil {
		return s, nil
	}
	values := map[string]string{}
	fill := func(field string, parts []secretPart) (string, error) {
		var b strings.Builder
		for _, p := range parts {
			if p.name == "" {
				b.WriteString(p.text)
				continue
			}
			v, ok := values[p.name]
			if !ok {
				var err error
				if v, err = get(p.name); err != nil {
					return "", fmt.Errorf("%s of server %q: %w", field, s.Name, err)
				}
				values[p.name] = v
			}
			b.WriteString(v)
		}
		return b.String(), nil
	}
	out := s
	out.Env, out.Headers, out.Args = maps.Clone(s.Env), maps.Clone(s.Headers), slices.Clone(s.Args)
	for _, field := range slices.Sorted(maps.Keys(s.secrets.fields)) {
		v, err := fill(field, s.secrets.fields[field])
		if err != nil {
			return Server{}, err
		}
		switch {
		case strings.HasPrefix(field, "env."):
			out.Env[strings.TrimPrefix(field, "env.")] = v
		case strings.HasPrefix(field, "headers."):
			out.Headers[strings.TrimPrefix(field, "headers.")] = v
		default:
			i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(field, "args["), "]"))
			if err != nil || i < 0 || i >= len(out.Args) {
				return Server{}, fmt.Errorf("config: server %q: secret reference in unknown field %q", s.Name, field)
			}
			out.Args[i] = v
		}
	}
	out.secrets = nil
	return out, nil
}

// secretsInClear refuses a secret in the headers of a remote server reached
// over plain http on another machine: anyone on the way would read what
// the store keeps from every file and log. Loopback is allowed (a local
// proxy, a test server).
func (l *loader) secretsInClear(s *Server, p string) {
	if s.secrets == nil || s.URL == "" {
		return
	}
	u, err := url.Parse(s.URL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || IsLoopbackHost(u.Hostname()) {
		return
	}
	for _, field := range slices.Sorted(maps.Keys(s.secrets.fields)) {
		if strings.HasPrefix(field, "headers.") {
			key := join(p, field)
			l.errLine(l.origin[key].line, key, "a secret would travel in clear to %s over http: use https (http is for a loopback host)", truncate(u.Host, 60))
		}
	}
}

// SecretsKeyFile is the key of the secret store's encrypted file (the
// store's fallback where no keychain answers, docs/secrets.md): in the
// user's state directory ($XDG_STATE_HOME, else ~/.local/state; the local
// application data directory on Windows and macOS), mcp-gateway/secrets.key,
// apart from the configuration directory that holds the file it opens.
func SecretsKeyFile(home, goos string, getenv func(string) (string, bool)) string {
	return userDir(home, goos, getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"), "Application Support", "secrets.key")
}

// SecretsDir is where the secret store keeps its files (the names of the
// secrets in the keychain, or the encrypted file): the configuration
// directory, ~/.config/mcp-gateway under home.
func SecretsDir(home string) string {
	return filepath.Dir(DefaultPath(home))
}

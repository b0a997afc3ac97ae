package config

import (
	"os"
	"path/filepath"
	"strings"
)

// expandVars expands ${VAR} and ${VAR:-default} in s using env (${env:VAR},
// VS Code's spelling, is accepted too). "$${" is a
// literal "${". A "$" not followed by "{" is kept as it is. ${VAR} of an
// unset (or empty) VAR expands to ""; ${VAR:-default} gives default then.
// It returns the names of the unset variables that ${VAR} referred to, and
// a message when the syntax is wrong. A secret reference is wrong here
// (expandRefs allows one).
func expandVars(s string, env func(string) (string, bool)) (out string, unset []string, bad string) {
	out, _, unset, bad = expandRefs(s, env, false)
	return out, unset, bad
}

// expandRefs is expandVars where secrets, when true, allows secret
// references, ${secret:NAME} (secretref.go). They are not expanded: out
// writes each as it is written, and parts, non-nil when s has one, are s
// split into literal text (${VAR} already expanded) and references. That
// is the one expansion pass: what a variable expanded to is never read
// for a reference, and a secret's value, put in later (Server.WithSecrets),
// for nothing at all.
func expandRefs(s string, env func(string) (string, bool), secrets bool) (out string, parts []secretPart, unset []string, bad string) {
	if !strings.Contains(s, "${") {
		return s, nil, nil, ""
	}
	var b, lit strings.Builder // all of it, and the literal text since the last reference
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", nil, nil, "unterminated ${ (write $${ for a literal ${)"
		}
		expr := s[i+2 : i+2+end]
		i += 2 + end + 1
		if name, ok := strings.CutPrefix(expr, secretScheme); ok {
			if msg := checkSecretRef(name, secrets); msg != "" {
				return "", nil, nil, msg
			}
			parts = append(parts, secretPart{text: lit.String()}, secretPart{name: name})
			lit.Reset()
			b.WriteString(SecretRef(name))
			continue
		}
		name, def, hasDef := strings.Cut(expr, ":-")
		name = strings.TrimPrefix(name, "env:") // VS Code spelling
		if strings.HasPrefix(name, "input:") {
			return "", nil, nil, "${" + truncate(expr, 40) + "} is a VS Code input prompt, which mcp-gateway cannot ask; use ${NAME}"
		}
		if !isEnvName(name) {
			return "", nil, nil, "${" + truncate(expr, 40) + "} is not a variable reference (${NAME} or ${NAME:-default})"
		}
		if hasDef && strings.Contains(def, "${"+secretScheme) {
			// It would be cut at the reference's "}" and give its text,
			// never the secret: the server would get "${secret:…}".
			return "", nil, nil, "${" + name + ":-…} cannot have a secret as its default: a default is text, and a reference stands alone (${secret:NAME})"
		}
		v, _ := env(name)
		switch {
		case v != "":
			b.WriteString(v)
			lit.WriteString(v)
		case hasDef:
			b.WriteString(def)
			lit.WriteString(def)
		default:
			unset = append(unset, name)
		}
	}
	if parts != nil {
		parts = append(parts, secretPart{text: lit.String()})
	}
	return b.String(), parts, unset, ""
}

// isEnvName reports whether s is an environment variable name:
// [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expand expands ${VAR} in the value of a server's field, recording a
// warning per unset variable (naming the variable and key, never a value)
// and, when something was expanded, the text as written for --show-config.
// A secret reference is kept (expandRefs) where secrets allows one, and
// recorded in *refs; elsewhere it is an error.
func (l *loader) expand(server, field, key, v string, line int, refs **secretRefs, secrets bool) string {
	out, parts, unset, bad := expandRefs(v, l.env, secrets)
	if bad != "" {
		l.errLine(line, key, "%s", bad)
		return v
	}
	for _, name := range unset {
		l.warn(line, key, "${%s} is not set; it expands to \"\"", name)
	}
	if parts != nil {
		if *refs == nil {
			*refs = &secretRefs{fields: map[string][]secretPart{}}
		}
		(*refs).fields[field] = parts
	}
	if out != v || strings.Contains(v, "${") {
		if l.cfg.shown == nil {
			l.cfg.shown = map[string]string{}
		}
		l.cfg.shown[shownKey(server, field)] = v
	}
	return out
}

func shownKey(server, field string) string { return server + "\x00" + field }

// IsRelative reports whether p is a relative path: not "", not absolute,
// not rooted ("\x" on Windows, which is the current drive's) and naming no
// volume ("C:x").
func IsRelative(p string) bool {
	return p != "" && !filepath.IsAbs(p) && filepath.VolumeName(p) == "" && !os.IsPathSeparator(p[0])
}

// ResolvePath joins p to base when p is relative (IsRelative) and base is
// not "". Load resolves the relative paths of a file this way, against
// the file's directory.
func ResolvePath(base, p string) string {
	if base == "" || !IsRelative(p) {
		return p
	}
	return filepath.Join(base, p)
}

// HasDir reports whether the command names a directory ("./server",
// "bin/server", `..\x.exe` on Windows) rather than a program to look up in
// PATH.
func HasDir(command string) bool {
	return strings.ContainsAny(command, "/"+string(filepath.Separator))
}

// ExpandHome replaces a leading "~" or "~/" ("~\" too on Windows) with
// home, as the configuration does for command, cwd, --config and the other
// paths. Other paths, and all paths when home is "", are returned as they are.
func ExpandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return filepath.Join(home, p[2:])
	}
	return p
}

package safetext

import (
	"regexp"
	"strings"
	"unicode"
)

// Secrets are recognised here by their shape, whatever they are called
// around them: the one set of rules behind every place that shows a value
// which may hold one (--show-config, status, a backend's stderr, an
// upstream API's error). Each caller chooses what a secret is replaced
// with: Redact writes "[redacted]", the configuration's views "***".

// SecretName reports whether the name of a variable, header, flag, query
// parameter or JSON member looks like it names a secret: it contains
// token, secret, password, passwd, key, auth, credential, cookie, session,
// private or signature, in any case ("Authorization", "GITHUB_TOKEN",
// "api_key", "X-Amz-Signature"), or it is sig (Azure's shared access
// signatures).
func SecretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	if n == "sig" {
		return true
	}
	for _, w := range []string{"token", "secret", "password", "passwd", "key", "auth", "credential", "cookie", "session", "private", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

var (
	// urlPattern finds URLs in text: a scheme, "://", and everything up
	// to a space, a quote or an angle bracket.
	urlPattern = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>`]+")
	// assignPattern finds NAME=VALUE (also --NAME=VALUE, and a query
	// string's pairs outside a URL); in NAME=SCHEME CREDENTIAL
	// (auth=Bearer …) the value is the credential.
	// A JSON escape before NAME is no part of it (\nsig=…, \u0026sig=…).
	assignPattern = regexp.MustCompile(`(` + jsonEscape + `)?([A-Za-z0-9_.-]+)=((?i:bearer|basic|token|digest|negotiate)\s+)?([^\s"'&,;<>]+)`)
	// jsonEscape is a JSON escape that ends in a letter or a digit.
	jsonEscape = `\\[bfnrt]|\\u[0-9A-Fa-f]{4}`
	// memberPattern finds a JSON member with a string value.
	memberPattern = regexp.MustCompile(`"([A-Za-z0-9_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

	// The table of shapes is strict because it runs over tool results,
	// where a word taken out is a result changed. What Mask shows —
	// the configuration, status, a backend's stderr, an upstream API's
	// error, which reach logs and clients' error data — loses nothing
	// worth keeping to a mask, so Mask also masks the looser forms of the
	// same secrets: the credential after bearer or basic in any case and
	// spacing, from 6 characters (all letters only from 20: "Bearer
	// authentication" is prose), and the token forms from 20 characters.
	// Both begin at a word boundary (\b) or after a JSON escape whose last
	// byte is a letter or digit (jsonEscape, kept: "\nghp_…" is a
	// newline and a token, as boundaryBefore reads it), and a credential
	// may follow its scheme after JSON's escape of a space (\t, \n, \r,
	// \f, \u0009, \u000c, …) as after the space itself.
	looseCred = regexp.MustCompile(`(?i)(` + jsonEscape + `|\b)(bearer|basic)((?:\s|\\[fnrt]|\\u00(?:0[9aAcCdD]|20))+)([A-Za-z0-9._~+/=*-]{6,})`)
	looseKey  = regexp.MustCompile(`(` + jsonEscape + `|\b)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
)

// Mask returns s with each secret it recognises replaced by mask:
//   - a secret of a known shape, wherever it is (the table MaskShapes
//     uses: API keys such as sk-… (also one an API shows partly masked,
//     sk-abc***xyz), ghp_…, github_pat_…, xoxb-…, glpat-…, AKIA…, AIza…,
//     JSON Web Tokens, private keys, the credential of an Authorization
//     header or after "Bearer" or "Basic", …);
//   - in a URL (scheme://…): the password of its user information (a user
//     given without one is often a token itself, so it goes whole), and
//     the value of each query parameter whose name looks secret
//     (SecretName) or whose value looks random (looksRandom);
//   - the value of NAME=VALUE (password=…, --token=…, PGPASSWORD=…, the
//     credential of auth=Bearer …) and of a JSON member "NAME": "VALUE"
//     whose NAME looks secret.
//
// Text without any of these is returned as it is, without a copy.
func Mask(s, mask string) string {
	s = maskLoose(maskShapes(s, mask), mask)
	if !strings.Contains(s, "://") && !strings.ContainsAny(s, "=\"") {
		return s // nothing a name or a URL shows
	}
	// A URL's query is masked by its own rules: the others, which see
	// name=value too, would take its fragment for part of a value.
	var b strings.Builder
	at := 0
	for _, span := range urlPattern.FindAllStringIndex(s, -1) {
		b.WriteString(maskNamed(s[at:span[0]], mask))
		b.WriteString(maskURL(s[span[0]:span[1]], mask))
		at = span[1]
	}
	if at == 0 {
		return maskNamed(s, mask)
	}
	b.WriteString(maskNamed(s[at:], mask))
	return b.String()
}

// maskShapes is MaskShapesString with mask for every kind.
func maskShapes(s, mask string) string {
	out, n := replaceShapes([]byte(s), func(out []byte, _ string) []byte { return append(out, mask...) })
	if n == 0 {
		return s
	}
	return string(out)
}

// maskLoose masks the looser forms of secrets (looseCred, looseKey).
func maskLoose(s, mask string) string {
	if strings.Contains(s, "gh") || strings.Contains(s, "_pat_") || strings.Contains(s, "eyJ") {
		s = looseKey.ReplaceAllStringFunc(s, func(m string) string {
			return looseKey.FindStringSubmatch(m)[1] + mask
		})
	}
	if !hasAuthScheme(s) {
		return s
	}
	return looseCred.ReplaceAllStringFunc(s, func(m string) string {
		sub := looseCred.FindStringSubmatch(m)
		if cred := sub[4]; len(cred) < 20 && strings.IndexFunc(cred, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			return m // a word: "Bearer authentication", "basic usage"
		}
		return sub[1] + sub[2] + sub[3] + mask
	})
}

// hasAuthScheme reports whether s holds "bearer" or "basic" in any case,
// in one pass that copies nothing (most lines hold neither).
func hasAuthScheme(s string) bool {
	foldedAt := func(i int, lower string) bool {
		if len(s)-i < len(lower) {
			return false
		}
		for k := range len(lower) {
			if s[i+k]|0x20 != lower[k] {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 == 'b' && (foldedAt(i+1, "earer") || foldedAt(i+1, "asic")) {
			return true
		}
	}
	return false
}

// maskNamed masks, in text without URLs, the values a name shows secret.
func maskNamed(s, mask string) string {
	s = assignPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := assignPattern.FindStringSubmatch(m)
		escape, name, scheme, v := sub[1], sub[2], sub[3], sub[4]
		if !SecretName(name) || isVarRef(v) || scheme == "" && isScheme(v) {
			return m // auth=Bearer alone: a scheme, not a secret
		}
		return escape + name + "=" + scheme + mask
	})
	return memberPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := memberPattern.FindStringSubmatch(m)
		if !SecretName(sub[1]) || sub[2] == "" || isVarRef(sub[2]) {
			return m
		}
		return m[:len(m)-len(sub[2])-1] + mask + `"`
	})
}

// maskURL masks the secrets of one URL, by text, so that it works on a URL
// as written with ${VAR} in it too.
func maskURL(s, mask string) string {
	rest, frag, hasFrag := strings.Cut(s, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if _, after, ok := strings.Cut(base, "://"); ok {
		authority, _, _ := strings.Cut(after, "/")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			masked := mask
			if user, _, ok := strings.Cut(authority[:at], ":"); ok {
				masked = user + ":" + mask
			}
			start := len(base) - len(after)
			base = base[:start] + masked + after[at:]
		}
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			if k, v, ok := strings.Cut(kv, "="); ok && !isVarRef(v) && (SecretName(k) || looksRandom(v)) {
				parts[i] = k + "=" + mask
			}
		}
		base += "?" + strings.Join(parts, "&")
	}
	if hasFrag {
		base += "#" + frag
	}
	return base
}

// MaskValue is Mask for a value that stands alone (an environment
// variable's value, a header's, one command-line argument): a value that
// is itself a long random-looking token (looksRandom) goes whole.
func MaskValue(v, mask string) string {
	if looksRandom(strings.TrimSpace(v)) {
		return mask
	}
	return Mask(v, mask)
}

// MaskArgs returns a copy of a command line fit to show: each argument as
// MaskValue, and the argument after a flag whose name looks secret
// (--token VALUE, -password VALUE) whole. A flag that names where a secret
// is rather than the secret (…-file, …-path, …-env) or switches something
// (--no-…) is not one.
func MaskArgs(args []string, mask string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && secretFlag(args[i-1]) && !strings.HasPrefix(a, "-") && !isVarRef(a) {
			out[i] = mask
			continue
		}
		out[i] = MaskValue(a, mask)
	}
	return out
}

// secretFlag reports whether a is a flag without a value of its own (no
// "=") whose name looks secret.
func secretFlag(a string) bool {
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return false
	}
	name := strings.ToLower(strings.TrimLeft(a, "-"))
	if name == "" || strings.HasPrefix(name, "no-") || strings.HasPrefix(name, "no_") {
		return false
	}
	for _, suffix := range []string{"file", "path", "dir", "env", "var", "url", "name", "type", "mode"} {
		if strings.HasSuffix(name, suffix) {
			return false
		}
	}
	return SecretName(name)
}

// isVarRef reports whether v is only a reference to a variable, ${NAME},
// as a configuration writes one: the name of a secret, not the secret. A
// default (${NAME:-value}) may be one, so it is not a reference.
func isVarRef(v string) bool {
	if !strings.HasPrefix(v, "${") || !strings.HasSuffix(v, "}") {
		return false
	}
	v = v[2 : len(v)-1]
	if name, ok := strings.CutPrefix(v, "secret:"); ok {
		// A secret's reference (docs/secrets.md): a name, not a value.
		return name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == ""
	}
	return v != "" && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// looksRandom reports whether v looks like a generated token rather than
// a word, a name, a path or a version: at least 20 characters of the
// URL-safe and base64 alphabets, not starting like a path or a flag, and
// either 32 or more hex digits (with or without dashes: keys, UUIDs) or
// letters and digits that change class (lower, upper, digit) at 4 or
// more of every 10 characters, as random text does (about 6 in 10 for
// base62) and names seldom do ("MyServer2024Production": 3 in 10).
func looksRandom(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v[:1], "/.~-") {
		return false
	}
	hex, alnum, changes := 0, 0, 0
	var classes, last byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		var class byte
		switch {
		case c >= '0' && c <= '9':
			class = 1
		case c >= 'a' && c <= 'z':
			class = 2
		case c >= 'A' && c <= 'Z':
			class = 4
		case strings.IndexByte("-_.~+/=", c) >= 0:
			continue
		default:
			return false
		}
		if c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			hex++
		}
		if alnum > 0 && class != last {
			changes++
		}
		alnum++
		classes |= class
		last = class
	}
	if hex == alnum && hex >= 32 && strings.Trim(v, "0123456789abcdefABCDEF-") == "" {
		return true
	}
	return classes&1 != 0 && classes&6 != 0 && alnum >= 20 && changes*10 >= (alnum-1)*4
}

package authn

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// MetadataPath is where a resource's protected resource metadata is
// served: the well-known path with the resource's own path after it (RFC
// 9728, section 3.1): /.well-known/oauth-protected-resource/mcp for
// https://gateway.example.com/mcp.
func MetadataPath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return wellKnown
	}
	return wellKnown + strings.TrimSuffix(u.EscapedPath(), "/")
}

const wellKnown = "/.well-known/oauth-protected-resource"

// WellKnown is the metadata's path without the resource's path, which
// clients that do not insert it ask for.
const WellKnown = wellKnown

// MetadataURL is the metadata's URL, named in every challenge
// (resource_metadata).
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + MetadataPath(resource)
}

// Metadata is the protected resource metadata document (RFC 9728): the
// resource, its authorization servers, the scopes it knows and that
// tokens go in the Authorization header.
func (v *Verifier) Metadata() []byte {
	servers := make([]string, 0, len(v.opts.Issuers))
	for _, is := range v.opts.Issuers {
		servers = append(servers, is.Issuer)
	}
	scopes := slices.Clone(v.opts.Scopes)
	for _, s := range v.opts.ScopesSupported {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	doc := struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported,omitempty"`
		BearerMethods        []string `json:"bearer_methods_supported"`
		ResourceName         string   `json:"resource_name"`
	}{v.opts.Resource, servers, scopes, []string{"header"}, "mcp-gateway"}
	out, _ := json.Marshal(doc)
	return out
}

// Resource is the resource identifier tokens must name.
func (v *Verifier) Resource() string { return v.opts.Resource }

// Scopes are the scopes every request needs.
func (v *Verifier) Scopes() []string { return v.opts.Scopes }

// Challenge is the WWW-Authenticate value of a refused request (RFC 6750,
// with RFC 9728's resource_metadata): e nil for a request without a token,
// which names no error; scopes are those to ask for (insufficient_scope:
// the scopes the request needs).
func Challenge(resource string, e *Error, scopes []string) string {
	var b strings.Builder
	b.WriteString("Bearer ")
	param := func(name, value string) {
		if b.Len() > len("Bearer ") {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(quotable(value))
		b.WriteByte('"')
	}
	if e != nil {
		param("error", e.Code)
	}
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	param("resource_metadata", MetadataURL(resource))
	if e != nil && e.Description != "" {
		param("error_description", e.Description)
	}
	return b.String()
}

// quotable makes s fit in a quoted-string: RFC 6750 allows only printable
// ASCII but '"' and '\' in its values.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"' || r == '\\':
			return '\''
		case r < 0x20 || r > 0x7e:
			return '?'
		}
		return r
	}, s)
}

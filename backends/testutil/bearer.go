package testutil

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// BearerSubject is the "sub" of the JWT a request's bearer token is, read
// without checking its signature (a test server that serves each person
// their own tools), or "" when there is none.
func BearerSubject(r *http.Request) string {
	parts := strings.Split(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), ".")
	if len(parts) != 3 {
		return ""
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct{ Sub string }
	_ = json.Unmarshal(raw, &c)
	return c.Sub
}

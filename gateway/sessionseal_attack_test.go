package gateway

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// malleable returns id with the unused low bits of its last base64
// character changed: the same bytes to a lenient decoder, another id to
// everything that keys on the string (the deleted ids, the sessions). ""
// when the sealed part's length leaves no unused bits.
func malleable(id string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	enc := id[strings.LastIndex(id, ".")+1:]
	if len(enc)%4 == 0 {
		return ""
	}
	last := strings.IndexByte(alphabet, enc[len(enc)-1])
	return id[:len(id)-1] + string(alphabet[last^1])
}

// TestSealedSessionIDNotMalleable: a sealed id is refused in any other
// spelling of its bytes — a changed unused bit of its last character,
// padding, the standard alphabet — so that what is keyed on the id (a
// DELETE remembered, docs/deploy.md: "that replica refuses the id from
// then on") cannot be stepped around by respelling it.
func TestSealedSessionIDNotMalleable(t *testing.T) {
	alice := &authn.Principal{Key: "alice@op", Identity: policy.Identity{Auth: "oauth", Subject: "alice"}}
	a := sealedFront(t, "gw-a", "shared-key")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	// A sealed part whose length leaves unused bits: the client's name
	// varies its length.
	var sid, alt string
	for n := 0; alt == ""; n++ {
		init := strings.Replace(initializeTS, `"claude-ai"`, `"c`+strings.Repeat("x", n)+`"`, 1)
		w := sealedDo(a, alice, http.MethodPost, "", init)
		sid = w.Header().Get(sessionIDHeader)
		if w.Code != http.StatusOK || !strings.HasPrefix(sid, "gw-a.s1") {
			t.Fatalf("initialize: %d %q %s", w.Code, sid, w.Body)
		}
		alt = malleable(sid)
	}
	enc := sid[strings.LastIndex(sid, ".")+1:]
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	prefix := sid[:len(sid)-len(enc)]
	std := base64.RawStdEncoding.EncodeToString(raw)
	for _, c := range []struct{ name, id string }{
		{"unused bit of the last character", alt},
		{"padded", prefix + base64.URLEncoding.EncodeToString(raw)},
		{"standard alphabet", prefix + std},
	} {
		if c.id == sid || c.name == "standard alphabet" && std == enc {
			continue // the same spelling: nothing to refuse
		}
		if _, _, err := a.seal.open(c.id, "alice@op", "", time.Now()); err == nil {
			t.Errorf("%s: %q opens as %q does", c.name, c.id, sid)
		}
	}

	// The DELETE the issuer remembers holds for every spelling.
	if w := sealedDo(a, alice, http.MethodDelete, sid, ""); w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", w.Code)
	}
	for _, id := range []string{sid, alt} {
		if w := sealedDo(a, alice, http.MethodPost, id, list); w.Code != http.StatusNotFound {
			t.Errorf("after DELETE, %q: %d %s, want 404", id, w.Code, w.Body)
		}
	}
}

package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// -http-audience AUD (with -http): a remote server that takes only bearer
// tokens meant for it, as a server behind upstream_auth does. Every POST
// must carry "Authorization: Bearer JWT" whose payload names AUD in aud
// and whose exp has not passed; any other gets HTTP 401. The token's
// signature is not checked (the issuer's part, not what the tests look
// at). The token's sub reaches the request as _meta["testbackend/subject"]
// (replacing what the client put there), which the tool whoami answers:
// text "SUB", structuredContent {"subject": SUB, "audience": aud}.

// subjectMeta is the _meta member the token's subject is put in.
const subjectMeta = "testbackend/subject"

// bearerClaims returns the claims of a request's bearer token when it is
// a JWT meant for audience that has not expired, else why not.
func bearerClaims(h http.Header, audience string) (map[string]any, string) {
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, "no bearer token"
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, "not a JWT"
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, "not a JWT"
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return nil, "not a JWT"
	}
	var aud []string
	switch a := claims["aud"].(type) {
	case string:
		aud = []string{a}
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok {
				aud = append(aud, s)
			}
		}
	}
	if !slices.Contains(aud, audience) {
		return nil, "the token is not meant for " + audience
	}
	if exp, ok := claims["exp"].(float64); !ok || time.Unix(int64(exp), 0).Before(time.Now()) {
		return nil, "the token has expired"
	}
	return claims, ""
}

// withSubject returns the JSON-RPC message body with the token's subject
// in its params' _meta.
func withSubject(body []byte, sub string) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var params map[string]json.RawMessage
	_ = json.Unmarshal(msg["params"], &params)
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(params["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[subjectMeta], _ = json.Marshal(sub)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, _ := json.Marshal(msg)
	return out
}

// whoami is the whoami tool's result for a call whose _meta is meta.
func whoami(meta json.RawMessage, audience string) string {
	var m map[string]any
	_ = json.Unmarshal(meta, &m)
	sub, _ := m[subjectMeta].(string)
	sc, _ := json.Marshal(map[string]string{"subject": sub, "audience": audience})
	t, _ := json.Marshal(sub)
	return `{"content":[{"type":"text","text":` + string(t) + `}],"structuredContent":` + string(sc) + `}`
}

// subjectOf is the token's subject a request's params carry in _meta
// (withSubject), or "".
func subjectOf(params json.RawMessage) string {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	sub, _ := p.Meta[subjectMeta].(string)
	return sub
}

// ownResource is the entry of resources/list, whose params are params,
// that names the token's subject's own resource: test://own/SUB.
func ownResource(params json.RawMessage) string {
	sub := subjectOf(params)
	r, _ := json.Marshal(map[string]string{"uri": "test://own/" + sub, "name": sub + "'s own"})
	return string(r)
}

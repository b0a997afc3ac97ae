package gateway

import (
	"bytes"
	"compress/flate"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// A session of the handshake era served over Streamable HTTP is named, when
// the replicas share a key (gateway.http.state_key_env), by its own state
// sealed (AES-256-GCM): what the client declared at initialize, the
// profile, a digest of the caller's identity and an expiry. Any replica
// opens such an id and serves the session's POSTs from it, with a front of
// its own rebuilt once from the sealed state (adopt, sessions.go); what
// needs the replica that issued it — the standalone GET stream, a resumed
// stream, resource subscriptions, the client's answers to requests made
// to it — is refused elsewhere with the issuing replica's name, which the
// id carries in the clear before its first dot so that a balancer can
// route on it (docs/deploy.md).
//
// An id is REPLICA "." "s1" KEYID "." BASE64URL(nonce | sealed), the
// replica and key id authenticated with it. The key id picks the key that
// opens it: the first of the configured keys seals, every one of them
// opens (rotation). Each key is derived once, when the front is made;
// nothing is derived per request.

// sessionLifetime bounds how long a sealed session id is served: a day
// covers a working session, and bounds how long a retired key must still
// open ids (rotation) and how long an id that leaked stays of use to its
// own caller. The client then gets 404 and initializes again (the spec's
// way for a session that ended).
const sessionLifetime = 24 * time.Hour

// maxSealedID is the longest sealed id made; a session whose state seals
// larger (a client declaring kilobytes of capabilities) gets a plain id
// of this replica's, as without a shared key. Header limits of balancers
// start at 8 KiB for all of a request's headers.
const maxSealedID = 2048

// sealedVersion marks an id of this format, before its key id.
const sealedVersion = "s1"

// sessionKey is one key that opens sealed session ids.
type sessionKey struct {
	id   string // 6 characters: base64url of 4 bytes of a digest of the key
	aead cipher.AEAD
}

// sessionSealer seals and opens sealed session ids.
type sessionSealer struct {
	replica string
	cur     sessionKey
	keys    map[string]cipher.AEAD // by key id: every configured key
}

// newSessionSealer returns the sealer of replica for keys, the first of
// which seals; nil without a key (sessions are this replica's own).
func newSessionSealer(replica string, keys [][]byte) *sessionSealer {
	if len(keys) == 0 {
		return nil
	}
	s := &sessionSealer{replica: replica, keys: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		// Separate from the requestState key (newSealer): the same
		// secret, another key.
		aead := keyAEAD("mcp-gateway session id key", k)
		idSum := sha256.Sum256(append([]byte("mcp-gateway session key id\x00"), k...))
		key := sessionKey{id: base64.RawURLEncoding.EncodeToString(idSum[:4]), aead: aead}
		if i == 0 {
			s.cur = key
		}
		if _, dup := s.keys[key.id]; !dup {
			s.keys[key.id] = aead
		}
	}
	return s
}

// splitKeys splits the value of gateway.http.state_key_env into its keys:
// separated by commas, the first the current one; nil for none.
func splitKeys(v []byte) [][]byte {
	var keys [][]byte
	for k := range bytes.SplitSeq(v, []byte(",")) {
		if k = bytes.TrimSpace(k); len(k) > 0 {
			keys = append(keys, k)
		}
	}
	return keys
}

// newStateSealer is the sealer of request states and task ids for the
// value of state_key_env (splitKeys): the first key seals, each opens; a
// key of this process's own without one.
func newStateSealer(v []byte) *sealer {
	keys := splitKeys(v)
	if len(keys) == 0 {
		return newSealer(nil)
	}
	return newSealer(keys[0], keys[1:]...)
}

// sessionState is what a sealed session id holds: what the front needs to
// serve the session's client as the replica that issued it does.
type sessionState struct {
	Version       string          `json:"v"`            // the negotiated protocol version
	Client        string          `json:"c,omitempty"`  // clientInfo.name
	ClientVersion string          `json:"cv,omitempty"` // clientInfo.version
	Caps          json.RawMessage `json:"k,omitempty"`  // the client's capabilities, as it wrote them
	// The client's names (namer) and how many tools it takes, as the
	// issuing replica chose them: fixed for the session.
	Sep      string `json:"ns,omitempty"`
	Strict   bool   `json:"nt,omitempty"`
	MaxName  int    `json:"nm,omitempty"`
	MaxTools int    `json:"mt,omitempty"`
	Profile  string `json:"p,omitempty"`
	Who      []byte `json:"w"` // whoDigest of the caller's identity
	Expires  int64  `json:"e"` // Unix seconds
}

// whoDigest is what a sealed id holds of the caller's identity (its
// principal's key, "" anonymous): enough to tell callers apart, nothing
// that names one.
func whoDigest(identity string) []byte {
	sum := sha256.Sum256([]byte("mcp-gateway session caller\x00" + identity))
	return sum[:16]
}

// Why a sealed id is refused; each is answered 404, as an unknown session.
var (
	errSealedMalformed = errors.New("not a sealed session id")
	errSealedKey       = errors.New("sealed with a key this replica does not have")
	errSealedForged    = errors.New("altered, or sealed with another key")
	errSealedExpired   = errors.New("expired")
	errSealedCaller    = errors.New("another caller's session")
	errSealedProfile   = errors.New("a session of another profile")
)

// seal returns the id that holds st, issued by this replica; "" when it
// would be longer than maxSealedID.
func (s *sessionSealer) seal(st *sessionState) string {
	js, _ := json.Marshal(st)
	// A flag byte first: 0 the JSON as it is, 1 compressed (when shorter).
	// Compressing before sealing tells nothing by the length: all the
	// state holds is what its own client sent and its own digest.
	plain := append([]byte{0}, js...)
	var z bytes.Buffer
	z.WriteByte(1)
	if w, err := flate.NewWriter(&z, flate.BestCompression); err == nil {
		_, _ = w.Write(js)
		if w.Close() == nil && z.Len() < len(plain) {
			plain = z.Bytes()
		}
	}
	prefix := s.replica + "." + sealedVersion + s.cur.id + "."
	ns := s.cur.aead.NonceSize()
	nonce := make([]byte, ns, ns+len(plain)+s.cur.aead.Overhead())
	_, _ = rand.Read(nonce)
	id := prefix + base64.RawURLEncoding.EncodeToString(s.cur.aead.Seal(nonce, nonce, plain, []byte(prefix)))
	if len(id) > maxSealedID {
		return ""
	}
	return id
}

// maxSealedPlain bounds what an id opens to once decompressed.
const maxSealedPlain = 64 << 10

// open returns the state id holds and the replica that issued it, if it
// is a sealed id of this deployment, unexpired at now, of the caller whose
// identity is who, for profile.
func (s *sessionSealer) open(id, who, profile string, now time.Time) (*sessionState, string, error) {
	if len(id) > maxSealedID {
		return nil, "", errSealedMalformed
	}
	replica, rest, ok := strings.Cut(id, ".")
	if !ok || !validReplica(replica) {
		return nil, "", errSealedMalformed
	}
	head, enc, ok := strings.Cut(rest, ".")
	kid, ok2 := strings.CutPrefix(head, sealedVersion)
	if !ok || !ok2 {
		return nil, "", errSealedMalformed
	}
	aead := s.keys[kid]
	if aead == nil {
		return nil, "", errSealedKey
	}
	// Strict: one spelling per id (no unused bits set), or a DELETE
	// remembered by id could be stepped around by respelling it.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, "", errSealedMalformed
	}
	prefix := id[:len(replica)+1+len(head)+1]
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(prefix))
	if err != nil || len(plain) == 0 {
		return nil, "", errSealedForged
	}
	js := plain[1:]
	switch plain[0] {
	case 0:
	case 1:
		if js, err = io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(js)), maxSealedPlain)); err != nil {
			return nil, "", errSealedForged
		}
	default:
		return nil, "", errSealedForged
	}
	st := new(sessionState)
	if err := json.Unmarshal(js, st); err != nil || st.Version == "" {
		return nil, "", errSealedForged
	}
	switch {
	case now.Unix() > st.Expires:
		return nil, "", errSealedExpired
	case !bytes.Equal(st.Who, whoDigest(who)):
		return nil, "", errSealedCaller
	case st.Profile != profile:
		return nil, "", errSealedProfile
	}
	return st, replica, nil
}

// validReplica reports whether name can name a replica in a session id:
// 1 to 63 letters, digits, '-' and '_' (a host name's label).
func validReplica(name string) bool {
	if name == "" || len(name) > 63 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ReplicaName makes a replica's name of name (a host name, say): its first
// label, with what a name cannot hold replaced by '-'; a random one when
// nothing is left.
func ReplicaName(name string) string {
	name, _, _ = strings.Cut(name, ".")
	b := []byte(name)
	if len(b) > 63 {
		b = b[:63]
	}
	for i, c := range b {
		if !validReplica(string(c)) {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return strings.ToLower(rand.Text()[:10])
	}
	return string(b)
}

// stateOf is the sealed state of a session of the handshake era whose
// initialize had params, for the caller whose identity is who, at now.
func (g *Gateway) stateOf(params json.RawMessage, who, profile string, now time.Time) *sessionState {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	_ = json.Unmarshal(orEmpty(params), &p)
	n := g.namerFor(p.ClientInfo.Name)
	return &sessionState{Version: negotiate(p.ProtocolVersion), Client: p.ClientInfo.Name, ClientVersion: p.ClientInfo.Version,
		Caps: p.Capabilities, Sep: n.sep, Strict: n.strict, MaxName: n.max, MaxTools: g.maxToolsFor(p.ClientInfo.Name),
		Profile: profile, Who: whoDigest(who), Expires: now.Add(sessionLifetime).Unix()}
}

// declared is what the client declared, as the front of the replica that
// issued the session has it (identify).
func (st *sessionState) declared() *declared {
	return &declared{identified: true, version: st.Version, client: st.Client, caps: st.Caps, backend: backends.Declared(st.Caps),
		naming: namer{sep: st.Sep, strict: st.Strict, max: st.MaxName}, maxTools: st.MaxTools}
}

package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
)

// A session of the handshake era served over Streamable HTTP is named, when
// the replicas share a key (gateway.http.state_key_env), by its own state
// sealed (AES-256-GCM, streamhttp.Sealer): what the client declared at
// initialize, the profile, a digest of the caller's identity and an
// expiry. Any replica opens such an id and serves the session's POSTs from
// it, with a front of its own rebuilt once from the sealed state (adopt,
// sealedhttp.go); what needs the replica that issued it — the standalone
// GET stream, a resumed stream, resource subscriptions, the client's
// answers to requests made to it — is refused elsewhere with the issuing
// replica's name, which the id carries in the clear before its first dot
// so that a balancer can route on it (docs/deploy.md).
//
// Each key is derived once, when the front is made, from one of the
// configured secrets; nothing is derived per request.

// sessionLifetime bounds how long a sealed session id is served: a day
// covers a working session, and bounds how long a retired key must still
// open ids (rotation) and how long an id that leaked stays of use to its
// own caller. The client then gets 404 and initializes again (the spec's
// way for a session that ended).
const sessionLifetime = 24 * time.Hour

// sessionSealer seals a session's state into its id and opens it back.
// A state that seals larger than streamhttp.MaxSealedID (a client
// declaring kilobytes of capabilities) gets no sealed id: the session
// gets a plain id of this replica's, as without a shared key.
type sessionSealer struct{ *streamhttp.Sealer }

// newSessionSealer returns the sealer of replica for keys (splitKeys), the
// first of which seals; nil without a key (sessions are this replica's
// own).
func newSessionSealer(replica string, keys [][]byte) *sessionSealer {
	if len(keys) == 0 {
		return nil
	}
	sk := make([]streamhttp.Key, len(keys))
	for i, k := range keys {
		// Separate from the requestState key (newSealer): the same
		// secret, another key.
		idSum := sha256.Sum256(append([]byte("mcp-gateway session key id\x00"), k...))
		sk[i] = streamhttp.Key{ID: base64.RawURLEncoding.EncodeToString(idSum[:4]), AEAD: keyAEAD("mcp-gateway session id key", k)}
	}
	return &sessionSealer{streamhttp.NewSealer(replica, sk)}
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

// Why a sealed id that opens is refused; each is answered 404, as an
// unknown session, as are streamhttp's reasons an id does not open.
var (
	errSealedExpired = errors.New("expired")
	errSealedCaller  = errors.New("another caller's session")
	errSealedProfile = errors.New("a session of another profile")
)

// seal returns the id that holds st, issued by this replica; "" when it
// would be longer than streamhttp.MaxSealedID. The state is compressed
// (Sealer.Seal), which tells nothing by the length: all it holds is what
// its own client sent and its own digest.
func (s *sessionSealer) seal(st *sessionState) string {
	js, _ := json.Marshal(st)
	return s.Seal(js)
}

// open returns the state id holds and the replica that issued it, if it
// is a sealed id of this deployment, unexpired at now, of the caller whose
// identity is who, for profile.
func (s *sessionSealer) open(id, who, profile string, now time.Time) (*sessionState, string, error) {
	js, replica, err := s.Open(id)
	if err != nil {
		return nil, "", err
	}
	st := new(sessionState)
	if err := json.Unmarshal(js, st); err != nil || st.Version == "" {
		return nil, "", streamhttp.ErrForged
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

// ReplicaName makes a replica's name of name (a host name, say): its first
// label, with what a name cannot hold replaced by '-'; a random one when
// nothing is left.
func ReplicaName(name string) string { return streamhttp.ReplicaName(name) }

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

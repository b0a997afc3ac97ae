package gateway

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A requestState the gateway hands out is sealed: encrypted and
// authenticated (AES-256-GCM) with a key the replicas of one deployment
// share (gateway.http.state_key_env), so that no client can forge or alter
// one, and any replica can tell a state of its own deployment from
// garbage. It is bound to the caller it was handed to, as a task id is
// (taskids.go): another caller's retry with it opens to nothing. It is of
// one of two kinds:
//
//   - a held call's (hold.go): it names the call and the gateway process
//     that holds it;
//   - a backend's own (one that speaks 2026-07-28), wrapped for a caller
//     the gateway tells from others (stateOwner): the backend sees one
//     client, the gateway, and cannot bind its state to the caller; the
//     gateway does, and gives the backend back exactly its state. Any
//     replica opens it. For a single caller (stdio, auth none, the shared
//     token) a backend's state passes through untouched.
//
// Only states with sealedPrefix are the gateway's; under OAuth every state
// a client sends back must be one (retryState).

// sealedPrefix starts every requestState the gateway seals.
const sealedPrefix = "mcpgw1."

// sealer seals and opens request states, and task ids (taskids.go).
type sealer struct {
	aead     cipher.AEAD   // the current key's: it seals
	old      []cipher.AEAD // the keys being rotated out: they still open (openSealed)
	nonceKey [32]byte      // derives a task id's nonce from what it seals
	process  string        // this process, among the replicas
}

// newSealer returns a sealer with a key derived from key, and from each
// of old, which still open what they sealed (rotation); a nil key is a
// random one, good for this process only. Each key is derived once, here.
func newSealer(key []byte, old ...[]byte) *sealer {
	if key == nil {
		key = []byte(rand.Text())
	}
	s := &sealer{aead: stateAEAD(key), nonceKey: sha256.Sum256(append([]byte("mcp-gateway task id nonce\x00"), key...)), process: rand.Text()}
	for _, k := range old {
		s.old = append(s.old, stateAEAD(k))
	}
	return s
}

// stateAEAD is the AEAD of key for request states and task ids.
func stateAEAD(key []byte) cipher.AEAD {
	sum := sha256.Sum256(key)
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// openSealed opens raw (nonce, then the sealed bytes) with the current key,
// else with each key being rotated out.
func (s *sealer) openSealed(raw, aad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(raw) < n {
		return nil, errStateInvalid
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], aad)
	for _, a := range s.old {
		if err == nil {
			break
		}
		plain, err = a.Open(nil, raw[:n], raw[n:], aad)
	}
	return plain, err
}

// sealed is a request state's contents. Kind says which of the two it is:
// "" a held call's (the first kind, so that its states sealed before the
// second kind existed open as they did), kindBackendState a backend's.
type sealed struct {
	Kind    string `json:"k,omitempty"`
	Hold    string `json:"h,omitempty"`
	Who     string `json:"w,omitempty"` // the caller's principal key (front.identity)
	Process string `json:"p,omitempty"`
	Expires int64  `json:"e,omitempty"` // Unix seconds; 0: the backend's state, which lives as long as the backend lets it
	// A backend's state: the request it answered (its method and the name
	// or URI the client gave) and the requestState member's value, byte
	// for byte ([]byte: JSON of a string would mend invalid UTF-8).
	Method string `json:"m,omitempty"`
	Name   string `json:"n,omitempty"`
	State  []byte `json:"s,omitempty"`
}

// kindBackendState is the kind of a backend's state wrapped for its caller.
const kindBackendState = "backend"

// seal returns the request state naming hold for caller who, valid until
// expires.
func (s *sealer) seal(hold, who string, expires time.Time) string {
	return s.sealState(sealed{Hold: hold, Who: who, Process: s.process, Expires: expires.Unix()})
}

// sealBackend returns the request state that wraps a backend's own, the
// requestState member's value state of its answer to a method request of
// name, for caller who.
func (s *sealer) sealBackend(who, method, name string, state json.RawMessage) string {
	return s.sealState(sealed{Kind: kindBackendState, Who: who, Method: method, Name: name, State: state})
}

func (s *sealer) sealState(st sealed) string {
	plain, _ := json.Marshal(st)
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(sealedPrefix)))
}

// Why a request state is refused.
var (
	errStateInvalid = errors.New("requestState was not issued by this gateway, or was altered")
	errStateExpired = errors.New("requestState has expired: call again")
	errStateReplica = errors.New("requestState belongs to another gateway process (replica): a call held for input lives in the process that returned it; send the retry there, or call again")
)

// openState returns what a request state sealed for caller who holds:
// another caller's is answered as one the gateway never issued, which
// tells it nothing. A held call's is checked for its expiry and process.
func (s *sealer) openState(state, who string, now time.Time) (sealed, error) {
	var st sealed
	enc, ok := strings.CutPrefix(state, sealedPrefix)
	if !ok {
		return st, errStateInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return st, errStateInvalid
	}
	plain, err := s.openSealed(raw, []byte(sealedPrefix))
	if err != nil || json.Unmarshal(plain, &st) != nil || st.Who != who {
		return sealed{}, errStateInvalid
	}
	switch st.Kind {
	case kindBackendState:
		if st.State == nil || who == "" {
			return sealed{}, errStateInvalid
		}
		return st, nil
	case "":
	default:
		return sealed{}, errStateInvalid
	}
	switch {
	case st.Hold == "":
		return sealed{}, errStateInvalid
	case now.Unix() > st.Expires:
		return sealed{}, errStateExpired
	case st.Process != s.process:
		return sealed{}, errStateReplica
	}
	return st, nil
}

// open returns the hold a request state of this process names, if it was
// sealed for caller who.
func (s *sealer) open(state, who string, now time.Time) (string, error) {
	st, err := s.openState(state, who, now)
	if err == nil && st.Kind != "" {
		err = errStateInvalid
	}
	return st.Hold, err
}

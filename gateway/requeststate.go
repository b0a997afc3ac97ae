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

// A requestState the gateway hands out (hold.go) is sealed: encrypted and
// authenticated (AES-256-GCM) with a key the replicas of one deployment
// share (gateway.http.state_key_env), so that no client can forge or alter
// one, and any replica can tell a state of its own deployment from
// garbage. It names the held call and the gateway process that holds it.
// It is bound to the caller it was handed to, as a task id is (taskids.go):
// another caller's retry with it opens to nothing. A backend's own
// requestState (one that speaks 2026-07-28) passes through untouched: only
// states with sealedPrefix are the gateway's.

// sealedPrefix starts every requestState the gateway seals.
const sealedPrefix = "mcpgw1."

// sealer seals and opens request states, and task ids (taskids.go).
type sealer struct {
	aead     cipher.AEAD
	nonceKey [32]byte // derives a task id's nonce from what it seals
	process  string   // this process, among the replicas
}

// newSealer returns a sealer with a key derived from key; a nil key is a
// random one, good for this process only.
func newSealer(key []byte) *sealer {
	if key == nil {
		key = []byte(rand.Text())
	}
	sum := sha256.Sum256(key)
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &sealer{aead: aead, nonceKey: sha256.Sum256(append([]byte("mcp-gateway task id nonce\x00"), key...)), process: rand.Text()}
}

// sealed is a request state's contents.
type sealed struct {
	Hold    string `json:"h"`
	Who     string `json:"w,omitempty"` // the caller's principal key (front.identity)
	Process string `json:"p"`
	Expires int64  `json:"e"` // Unix seconds
}

// seal returns the request state naming hold for caller who, valid until
// expires.
func (s *sealer) seal(hold, who string, expires time.Time) string {
	plain, _ := json.Marshal(sealed{Hold: hold, Who: who, Process: s.process, Expires: expires.Unix()})
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

// open returns the hold a request state of this process names, if it was
// sealed for caller who: another caller's is answered as one the gateway
// never issued, which tells it nothing.
func (s *sealer) open(state, who string, now time.Time) (string, error) {
	enc, ok := strings.CutPrefix(state, sealedPrefix)
	if !ok {
		return "", errStateInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return "", errStateInvalid
	}
	plain, err := s.aead.Open(nil, raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():], []byte(sealedPrefix))
	if err != nil {
		return "", errStateInvalid
	}
	var st sealed
	if json.Unmarshal(plain, &st) != nil || st.Hold == "" || st.Who != who {
		return "", errStateInvalid
	}
	switch {
	case now.Unix() > st.Expires:
		return "", errStateExpired
	case st.Process != s.process:
		return "", errStateReplica
	}
	return st.Hold, nil
}

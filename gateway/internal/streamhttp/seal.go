package streamhttp

import (
	"bytes"
	"compress/flate"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"strings"
)

// A sealed session id carries its session's state, so that any replica
// that has the key serves the session from the id alone; the replica that
// issued it is named in the clear before its first dot, so that a
// balancer can route on it (docs/deploy.md). An id is
//
//	REPLICA "." "s1" KEYID "." BASE64URL(nonce | sealed)
//
// with the replica and key id authenticated with the payload, and the key
// id picking the key that opens it: the first of a Sealer's keys seals,
// every one of them opens (rotation).

// MaxSealedID is the longest id Seal makes. Header limits of balancers
// start at 8 KiB for all of a request's headers.
const MaxSealedID = 2048

// sealedVersion marks an id of this format, before its key id.
const sealedVersion = "s1"

// maxPayload bounds what an id opens to once decompressed.
const maxPayload = 64 << 10

// Key is one key of a Sealer.
type Key struct {
	// ID names the key in the ids it seals: a few base64url characters
	// (no '.'), derived from the key so that every replica names it
	// alike.
	ID   string
	AEAD cipher.AEAD
}

// Sealer seals payloads into session ids of one replica, and opens the
// ids of every replica that shares one of its keys. Its methods are safe
// for concurrent use.
type Sealer struct {
	replica string
	cur     Key
	keys    map[string]cipher.AEAD // by key id: every key
}

// NewSealer returns the sealer of replica (a name ReplicaName made) for
// keys, the first of which seals; nil without a key. Of two keys with one
// ID, the first is kept.
func NewSealer(replica string, keys []Key) *Sealer {
	if len(keys) == 0 {
		return nil
	}
	s := &Sealer{replica: replica, cur: keys[0], keys: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		if _, dup := s.keys[k.ID]; !dup {
			s.keys[k.ID] = k.AEAD
		}
	}
	return s
}

// Replica is the name of the replica whose ids s seals.
func (s *Sealer) Replica() string { return s.replica }

// Why an id does not open.
var (
	ErrMalformed = errors.New("not a sealed session id")
	ErrKey       = errors.New("sealed with a key this replica does not have")
	ErrForged    = errors.New("altered, or sealed with another key")
)

// Seal returns the id that holds payload, issued by s's replica and sealed
// with its first key; "" when it would be longer than MaxSealedID. The
// payload is compressed when that makes it shorter, so an id's length
// tells something of its payload: a payload that held what a client chose
// beside a secret kept from that client would let it guess the secret.
func (s *Sealer) Seal(payload []byte) string {
	// A flag byte first: 0 the payload as it is, 1 compressed.
	plain := append([]byte{0}, payload...)
	var z bytes.Buffer
	z.WriteByte(1)
	if w, err := flate.NewWriter(&z, flate.BestCompression); err == nil {
		_, _ = w.Write(payload)
		if w.Close() == nil && z.Len() < len(plain) {
			plain = z.Bytes()
		}
	}
	prefix := s.replica + "." + sealedVersion + s.cur.ID + "."
	aead := s.cur.AEAD
	ns := aead.NonceSize()
	nonce := make([]byte, ns, ns+len(plain)+aead.Overhead())
	_, _ = rand.Read(nonce)
	id := prefix + base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(prefix)))
	if len(id) > MaxSealedID {
		return ""
	}
	return id
}

// Open returns the payload id holds and the replica that issued it, if
// one of s's keys sealed it; else an error that is ErrMalformed, ErrKey or
// ErrForged. An id opens in one spelling only: the one Seal made.
func (s *Sealer) Open(id string) (payload []byte, replica string, err error) {
	if len(id) > MaxSealedID {
		return nil, "", ErrMalformed
	}
	replica, rest, ok := strings.Cut(id, ".")
	if !ok || !validReplica(replica) {
		return nil, "", ErrMalformed
	}
	head, enc, ok := strings.Cut(rest, ".")
	kid, ok2 := strings.CutPrefix(head, sealedVersion)
	if !ok || !ok2 {
		return nil, "", ErrMalformed
	}
	aead := s.keys[kid]
	if aead == nil {
		return nil, "", ErrKey
	}
	// Strict: one spelling per id (no unused bits set), or what is keyed
	// on the id (a DELETE remembered) could be stepped around by
	// respelling it.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, "", ErrMalformed
	}
	prefix := id[:len(replica)+1+len(head)+1]
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(prefix))
	if err != nil || len(plain) == 0 {
		return nil, "", ErrForged
	}
	payload = plain[1:]
	switch plain[0] {
	case 0:
	case 1:
		if payload, err = io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(payload)), maxPayload)); err != nil {
			return nil, "", ErrForged
		}
	default:
		return nil, "", ErrForged
	}
	return payload, replica, nil
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

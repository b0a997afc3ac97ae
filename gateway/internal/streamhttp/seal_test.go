package streamhttp

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// testKey is a key named id, derived from it.
func testKey(id string) Key {
	sum := sha256.Sum256([]byte("test key\x00" + id))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return Key{ID: id, AEAD: aead}
}

// A sealed id opens, on any replica with its key, to the payload it was
// sealed with, and names the replica that issued it; an altered id, or
// one of another key, does not. Rotation: the first key seals, every one
// opens. A payload too large for an id gets none; one that compresses is
// compressed.
func TestSealerOpensWhatItSealed(t *testing.T) {
	one, two := testKey("key1"), testKey("key2")
	a := NewSealer("replica-a", []Key{one})
	payload := []byte(`{"v":"2025-11-25","c":"claude-ai","k":{"sampling":{}}}`)
	id := a.Seal(payload)
	if !strings.HasPrefix(id, "replica-a.s1key1.") || len(id) > 200 {
		t.Fatalf("id %q (%d bytes): want the replica's name and the key's first, and little more than the payload", id, len(id))
	}
	b := NewSealer("replica-b", []Key{one})
	got, issuer, err := b.Open(id)
	if err != nil || issuer != "replica-a" || !bytes.Equal(got, payload) {
		t.Fatalf("open on another replica: %q, issuer %q, %v", got, issuer, err)
	}

	for _, c := range []struct {
		name string
		s    *Sealer
		id   string
		err  error
	}{
		{"another key", NewSealer("replica-b", []Key{two}), id, ErrKey},
		{"replica renamed", b, "replica-c" + strings.TrimPrefix(id, "replica-a"), ErrForged},
		{"key id altered", b, strings.Replace(id, ".s1key1.", ".s1key2.", 1), ErrKey},
		{"no key id", b, strings.Replace(id, ".s1key1.", ".s1.", 1), ErrKey},
		{"another version", b, strings.Replace(id, ".s1key1.", ".s2key1.", 1), ErrMalformed},
		{"no dot", b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", ErrMalformed},
		{"not a replica's name", b, "replica a" + strings.TrimPrefix(id, "replica-a"), ErrMalformed},
		{"too long", b, id + strings.Repeat("A", MaxSealedID), ErrMalformed},
		{"no payload", b, "replica-a.s1key1.", ErrMalformed},
	} {
		if _, _, err := c.s.Open(c.id); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	// Every byte of the sealed part altered: refused.
	head := strings.LastIndex(id, ".") + 1
	raw, _ := base64.RawURLEncoding.DecodeString(id[head:])
	for i := range raw {
		alt := bytes.Clone(raw)
		alt[i] ^= 0x01
		if _, _, err := b.Open(id[:head] + base64.RawURLEncoding.EncodeToString(alt)); err == nil {
			t.Fatalf("byte %d altered: opened", i)
		}
	}

	// Rotation: a replica with the new key first and the old one after
	// opens ids of both and seals with the new one; a replica that has
	// only the old key cannot open the new ids.
	rotated := NewSealer("replica-b", []Key{two, one})
	if _, _, err := rotated.Open(id); err != nil {
		t.Fatalf("an id of the old key on a rotated replica: %v", err)
	}
	fresh := rotated.Seal(payload)
	if _, _, err := rotated.Open(fresh); err != nil || !strings.HasPrefix(fresh, "replica-b.s1key2.") {
		t.Fatalf("an id of the new key %q: %v", fresh, err)
	}
	if _, _, err := b.Open(fresh); !errors.Is(err, ErrKey) {
		t.Fatalf("a new id on a replica with the old key only: %v", err)
	}

	// A payload of kilobytes that does not compress gets no id (too large
	// for a header); one that compresses is compressed within the bound.
	big := make([]byte, 3000)
	_, _ = rand.Read(big)
	if long := a.Seal(big); long != "" {
		t.Fatalf("a payload of %d bytes sealed to an id of %d", len(big), len(long))
	}
	many := bytes.Repeat([]byte("abc"), 1500)
	if id := a.Seal(many); id == "" || len(id) > 200 {
		t.Fatalf("compressible payload of %d bytes: id of %d bytes", len(many), len(id))
	} else if got, _, err := b.Open(id); err != nil || !bytes.Equal(got, many) {
		t.Fatalf("compressible payload opened: %d bytes, %v", len(got), err)
	}
}

// FuzzOpenSessionID: Open takes any string without panicking, and opens
// nothing its key did not seal (seed corpus in
// testdata/fuzz/FuzzOpenSessionID: a valid id, and altered ones).
func FuzzOpenSessionID(f *testing.F) {
	s := NewSealer("fuzz", []Key{testKey("fuzzkey")})
	f.Add(s.Seal([]byte(`{"v":"2025-11-25"}`)))
	f.Add("fuzz.s1fuzzkey.")
	f.Add("fuzz..")
	f.Fuzz(func(t *testing.T, id string) {
		payload, issuer, err := s.Open(id)
		if err != nil {
			return
		}
		// Only what this key sealed opens: its prefix is intact.
		if issuer == "" || payload == nil || !strings.HasPrefix(id, issuer+".s1fuzzkey.") {
			t.Fatalf("opened %q: issuer %q, %q", id, issuer, payload)
		}
	})
}

// ReplicaName makes a valid name of any host name, and keeps a valid one.
func TestReplicaName(t *testing.T) {
	for in, want := range map[string]string{
		"gw-a":                  "gw-a",
		"gw-a.example.com":      "gw-a",
		"gw a:8080":             "gw-a-8080",
		strings.Repeat("x", 70): strings.Repeat("x", 63),
	} {
		if got := ReplicaName(in); got != want || !validReplica(got) {
			t.Errorf("ReplicaName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ReplicaName(".example.com"); !validReplica(got) {
		t.Errorf("ReplicaName of an empty label: %q, not a valid name", got)
	}
}

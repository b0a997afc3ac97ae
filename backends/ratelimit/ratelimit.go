// Package ratelimit is the gateway's one token bucket. It limits its logs —
// a backend's stderr lines and log messages written to the gateway's log
// (package backends), and backends' log messages forwarded to clients
// (package gateway) — so that a backend writing millions of lines turns
// neither into gigabytes of the gateway's stderr nor into a flood on a
// client's stdin; what is dropped is counted and reported (Allow). It also
// limits each HTTP caller's requests and calls (gateway.rate_limits),
// telling a refused caller when to come back (Take).
package ratelimit

import (
	"sync"
	"time"
)

// Options shape a Bucket.
type Options struct {
	// Rate is the sustained number of records a second.
	Rate float64
	// Burst is the number of records that may pass at once.
	Burst float64
	// Resume is the allowance that must have built up again before records
	// pass after a drop, so that a steady flood yields a few reports of
	// dropped records a second rather than one per record. Rate/4 (at most
	// Burst) if zero.
	Resume float64
}

// Bucket is a token bucket. The zero value is not usable; see New.
type Bucket struct {
	o       Options
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// New returns a full bucket.
func New(o Options) *Bucket {
	if o.Resume == 0 {
		o.Resume = min(o.Rate/4, o.Burst)
	}
	return &Bucket{o: o}
}

// Allow reports whether one more record may pass at now and, when it may
// after some were dropped, how many were.
func (b *Bucket) Allow(now time.Time) (ok bool, dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens < 1 || b.dropped > 0 && b.tokens < b.o.Resume {
		b.dropped++
		return false, 0
	}
	b.tokens--
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// Take takes one token at now if there is one; if not, it reports how long
// until there will be. Unlike Allow it has no resume allowance: a caller
// refused is told to come back when one token has built up.
func (b *Bucket) Take(now time.Time) (ok bool, retryAfter time.Duration) {
	return b.TakeN(now, 1)
}

// TakeN takes n tokens at now if there are as many, and none if not: a
// refusal costs nothing. Refused, it reports how long until there will be
// n (never, for more than Burst: then until the bucket is full).
func (b *Bucket) TakeN(now time.Time, n int) (ok bool, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	want := float64(n)
	if b.tokens >= want {
		b.tokens -= want
		return true, 0
	}
	return false, time.Duration((min(want, b.o.Burst) - b.tokens) / b.o.Rate * float64(time.Second))
}

// refill adds what built up since the last use; b.mu is held.
func (b *Bucket) refill(now time.Time) {
	if b.last.IsZero() {
		b.tokens = b.o.Burst
	} else if now.After(b.last) {
		b.tokens = min(b.o.Burst, b.tokens+now.Sub(b.last).Seconds()*b.o.Rate)
	}
	if now.After(b.last) {
		b.last = now
	}
}

// full reports whether the bucket is as it was new (at now): forgetting it
// loses nothing.
func (b *Bucket) full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return b.tokens >= b.o.Burst && b.dropped == 0
}

// Flush returns the number of records dropped since the last one that
// passed, and forgets it: at the end of a stream, so that a flood's count
// is never lost.
func (b *Bucket) Flush() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	dropped := b.dropped
	b.dropped = 0
	return dropped
}

// Keyed is one Bucket per key (a backend's name, a caller), made on first
// use. Buckets that are full again are forgotten when the keys outgrow the
// last sweep, so that many callers, each seen once, do not stay in memory.
type Keyed struct {
	o         Options
	mu        sync.Mutex
	buckets   map[string]*Bucket
	nextSweep int
}

// minSweep is how many keys Keyed holds before it first looks for full
// buckets to forget.
const minSweep = 1024

// NewKeyed returns buckets with these options.
func NewKeyed(o Options) *Keyed {
	return &Keyed{o: o, buckets: map[string]*Bucket{}, nextSweep: minSweep}
}

// bucket returns key's bucket, made if need be.
func (k *Keyed) bucket(key string, now time.Time) *Bucket {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buckets[key]
	if b == nil {
		if len(k.buckets) >= k.nextSweep {
			for key, b := range k.buckets {
				if b.full(now) {
					delete(k.buckets, key)
				}
			}
			k.nextSweep = max(minSweep, 2*len(k.buckets))
		}
		b = New(k.o)
		k.buckets[key] = b
	}
	return b
}

// Allow is Bucket.Allow for key's bucket.
func (k *Keyed) Allow(key string, now time.Time) (ok bool, dropped int) {
	return k.bucket(key, now).Allow(now)
}

// Take is Bucket.Take for key's bucket.
func (k *Keyed) Take(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	return k.bucket(key, now).Take(now)
}

// TakeN is Bucket.TakeN for key's bucket.
func (k *Keyed) TakeN(key string, now time.Time, n int) (ok bool, retryAfter time.Duration) {
	return k.bucket(key, now).TakeN(now, n)
}

// Len is how many buckets are kept.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

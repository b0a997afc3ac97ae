// Package ratelimit is the one rate limiter of the gateway's logs: a
// backend's stderr lines and log messages written to the gateway's log
// (package backends), and backends' log messages forwarded to clients
// (package gateway). A backend writing millions of lines must turn neither
// into gigabytes of the gateway's stderr nor into a flood on a client's
// stdin; what is dropped is counted and reported.
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
	if b.last.IsZero() {
		b.tokens = b.o.Burst
	} else {
		b.tokens = min(b.o.Burst, b.tokens+now.Sub(b.last).Seconds()*b.o.Rate)
	}
	b.last = now
	if b.tokens < 1 || b.dropped > 0 && b.tokens < b.o.Resume {
		b.dropped++
		return false, 0
	}
	b.tokens--
	dropped, b.dropped = b.dropped, 0
	return true, dropped
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

// Keyed is one Bucket per key (a backend's name), made on first use.
type Keyed struct {
	o       Options
	mu      sync.Mutex
	buckets map[string]*Bucket
}

// NewKeyed returns buckets with these options.
func NewKeyed(o Options) *Keyed { return &Keyed{o: o, buckets: map[string]*Bucket{}} }

// Allow is Bucket.Allow for key's bucket.
func (k *Keyed) Allow(key string, now time.Time) (ok bool, dropped int) {
	k.mu.Lock()
	b := k.buckets[key]
	if b == nil {
		b = New(k.o)
		k.buckets[key] = b
	}
	k.mu.Unlock()
	return b.Allow(now)
}

package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	b := New(Options{Rate: 100, Burst: 10})
	now := time.Unix(1000, 0)
	for i := range 10 {
		if ok, _ := b.Allow(now); !ok {
			t.Fatalf("record %d of the burst refused", i)
		}
	}
	if ok, _ := b.Allow(now); ok {
		t.Fatal("record over the burst allowed")
	}
	// 20 ms later two records' worth has built up, but not the resume
	// allowance (25): still dropping.
	if ok, _ := b.Allow(now.Add(20 * time.Millisecond)); ok {
		t.Error("record allowed before the resume allowance built up")
	}
	if ok, dropped := b.Allow(now.Add(time.Second)); !ok || dropped != 2 {
		t.Errorf("after a second: ok=%v dropped=%d, want true 2", ok, dropped)
	}
	if ok, dropped := b.Allow(now.Add(time.Second)); !ok || dropped != 0 {
		t.Errorf("next: ok=%v dropped=%d, want true 0", ok, dropped)
	}
	for b.Allow(now.Add(time.Second)); ; {
		if ok, _ := b.Allow(now.Add(time.Second)); !ok {
			break
		}
	}
	if n := b.Flush(); n != 1 {
		t.Errorf("Flush = %d, want 1", n)
	}
	if n := b.Flush(); n != 0 {
		t.Errorf("second Flush = %d, want 0", n)
	}
}

func TestKeyed(t *testing.T) {
	k := NewKeyed(Options{Rate: 1, Burst: 1})
	now := time.Unix(1000, 0)
	if ok, _ := k.Allow("a", now); !ok {
		t.Fatal("first record of a refused")
	}
	if ok, _ := k.Allow("a", now); ok {
		t.Error("second record of a allowed")
	}
	if ok, _ := k.Allow("b", now); !ok {
		t.Error("another key's record refused")
	}
}

func TestTake(t *testing.T) {
	b := New(Options{Rate: 2, Burst: 3})
	now := time.Unix(1000, 0)
	for i := range 3 {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("token %d of the burst refused", i)
		}
	}
	ok, wait := b.Take(now)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the burst: ok=%v retryAfter=%v, want false 500ms", ok, wait)
	}
	// A refusal costs nothing: a quarter second later, a quarter of the
	// wait has passed, not more.
	if ok, wait := b.Take(now.Add(250 * time.Millisecond)); ok || wait < 249*time.Millisecond || wait > 251*time.Millisecond {
		t.Fatalf("after 250ms: ok=%v retryAfter=%v, want false 250ms", ok, wait)
	}
	if ok, _ := b.Take(now.Add(500 * time.Millisecond)); !ok {
		t.Fatal("refused once a token built up")
	}
	// A clock that goes back takes nothing back.
	if ok, _ := b.Take(now); ok {
		t.Error("a token taken at an earlier time")
	}
}

func TestKeyedForgetsFullBuckets(t *testing.T) {
	k := NewKeyed(Options{Rate: 1, Burst: 1})
	now := time.Unix(1000, 0)
	for i := range 4 * minSweep {
		k.Take(fmt.Sprint(i), now)
	}
	if n := k.Len(); n != 4*minSweep {
		t.Fatalf("%d buckets, want all %d (none is full yet)", n, 4*minSweep)
	}
	later := now.Add(time.Second)
	k.Take("new", later) // the keys outgrew the sweep: the full ones go
	if n := k.Len(); n != 1 {
		t.Errorf("%d buckets after the sweep, want 1", n)
	}
	if ok, _ := k.Take("new", later); ok {
		t.Error("a bucket in use was forgotten")
	}
}

// TestTakeN: n tokens are taken all or none; a refusal says when n will
// be there, and for more than the burst, when the bucket is full.
func TestTakeN(t *testing.T) {
	b := New(Options{Rate: 2, Burst: 3})
	now := time.Unix(1000, 0)
	if ok, wait := b.TakeN(now, 4); ok || wait != 0 {
		t.Fatalf("four of three: ok=%v retryAfter=%v, want false 0 (full already)", ok, wait)
	}
	if ok, _ := b.TakeN(now, 2); !ok {
		t.Fatal("two of three refused: the refusal before took some")
	}
	if ok, wait := b.TakeN(now, 2); ok || wait != 500*time.Millisecond {
		t.Fatalf("two of one: ok=%v retryAfter=%v, want false 500ms", ok, wait)
	}
	if ok, _ := b.TakeN(now, 1); !ok {
		t.Fatal("the one left refused")
	}
}

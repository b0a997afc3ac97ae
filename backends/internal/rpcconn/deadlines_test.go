package rpcconn

import (
	"slices"
	"testing"
	"time"
)

// The list stays in deadline order whatever the order of adds and
// removes, and due takes exactly the calls whose deadline has passed.
func TestDeadlinesOrder(t *testing.T) {
	var fired int
	l := deadlines{fire: func() { fired++ }}
	defer l.stop()
	ps := make([]*pending, 6)
	for i, d := range []time.Duration{50, 10, 30, 10, 60, 20} {
		ps[i] = &pending{id: int64(i)}
		l.add(ps[i], d*time.Hour)
	}
	l.remove(ps[2]) // 30h
	l.remove(ps[2]) // twice is harmless
	var got []int64
	for p := l.head; p != nil; p = p.next {
		got = append(got, p.id)
		if p.next != nil && p.next.deadline.Before(p.deadline) {
			t.Fatalf("out of order at %d", p.id)
		}
		if p.next == nil && l.tail != p {
			t.Fatalf("tail is %d, the last is %d", l.tail.id, p.id)
		}
	}
	if want := []int64{1, 3, 5, 0, 4}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if !l.at.Equal(ps[1].deadline) {
		t.Errorf("timer set for %v, want the earliest deadline %v", l.at, ps[1].deadline)
	}
	due := l.due(ps[5].deadline) // 10h, 10h, 20h
	var dueIDs []int64
	for _, p := range due {
		dueIDs = append(dueIDs, p.id)
	}
	if !slices.Equal(dueIDs, []int64{1, 3, 5}) || l.head != ps[0] || !l.at.Equal(ps[0].deadline) {
		t.Fatalf("due %v, head %v, timer at %v", dueIDs, l.head.id, l.at)
	}
	l.remove(ps[0])
	l.remove(ps[4])
	if l.head != nil || l.tail != nil {
		t.Fatal("list not empty")
	}
	if fired != 0 {
		t.Fatalf("timer fired %d times", fired)
	}
}

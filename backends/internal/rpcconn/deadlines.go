package rpcconn

import "time"

// deadlines keeps the call timeouts of one conn on one timer: the calls
// waiting for a response in the order of their deadlines, and a timer set
// for the earliest. A call that ends only leaves the list; the timer stays
// as it is, and when it fires it ends the calls that are due and is set
// for the next deadline. Starting and ending a call so costs no timer of
// its own, only a time.Now and two links. Calls of one backend share its
// timeout, so a new call goes at the tail.
//
// Its methods are called with conn.mu held.
type deadlines struct {
	head, tail *pending
	timer      *time.Timer
	at         time.Time // when timer fires; zero when it is not set
	fire       func()    // the timer's function (conn.timeouts)
}

// add puts p in the list, due after d.
func (l *deadlines) add(p *pending, d time.Duration) {
	p.deadline = time.Now().Add(d)
	after := l.tail
	for after != nil && after.deadline.After(p.deadline) {
		after = after.prev
	}
	p.prev = after
	if after == nil {
		p.next, l.head = l.head, p
	} else {
		p.next, after.next = after.next, p
	}
	if p.next == nil {
		l.tail = p
	} else {
		p.next.prev = p
	}
	p.listed = true
	if l.at.IsZero() || p.deadline.Before(l.at) {
		l.set(p.deadline)
	}
}

// remove takes p out of the list, if it is in it.
func (l *deadlines) remove(p *pending) {
	if !p.listed {
		return
	}
	if p.prev == nil {
		l.head = p.next
	} else {
		p.prev.next = p.next
	}
	if p.next == nil {
		l.tail = p.prev
	} else {
		p.next.prev = p.prev
	}
	p.prev, p.next, p.listed = nil, nil, false
}

// due takes the calls due at now out of the list and sets the timer for
// the next deadline; the caller ends them.
func (l *deadlines) due(now time.Time) []*pending {
	var out []*pending
	for l.head != nil && !l.head.deadline.After(now) {
		p := l.head
		l.remove(p)
		out = append(out, p)
	}
	l.at = time.Time{}
	if l.head != nil {
		l.set(l.head.deadline)
	}
	return out
}

func (l *deadlines) set(at time.Time) {
	l.at = at
	if l.timer == nil {
		l.timer = time.AfterFunc(time.Until(at), l.fire)
	} else {
		l.timer.Reset(time.Until(at))
	}
}

// stop stops the timer (shutdown).
func (l *deadlines) stop() {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.at = time.Time{}
}

package streamhttp

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EventStore is an mcp.EventStore for the events of a session's streams,
// kept for a client that resumes one with Last-Event-ID.
//
// go-sdk's MemoryEventStore bounds the events' bytes, but keeps an entry
// for every stream a session ever had until the session ends, so a session
// that lives long grows with every call answered on an event stream. This
// store is told when a stream is complete (StreamDone) and keeps, per
// session, the open streams and only the keepDone streams completed last.
// In all it holds at most maxBytes of event data (one event may go past
// it): beyond, whole completed streams go first, oldest first, then the
// first events of the open ones, never the last event of the stream being
// appended to.
//
// Its methods are safe for concurrent use.
type EventStore struct {
	maxBytes int
	keepDone int

	mu       sync.Mutex
	bytes    int
	sessions map[string]*storedSession
	// done lists the completed streams of every session, oldest first;
	// entries of streams forgotten since are skipped, and dropped when
	// they outnumber the kept ones.
	done     []streamRef
	liveDone int
}

type streamRef struct{ session, stream string }

type storedSession struct {
	streams map[string]*storedStream
	done    []string // its completed streams still kept, oldest first
}

type storedStream struct {
	first int // the stream index of data[0]
	data  [][]byte
	size  int
	done  bool
}

// NewEventStore returns a store that holds at most maxBytes of event data
// and, per session, its open streams and its last keepDone completed ones.
func NewEventStore(maxBytes, keepDone int) *EventStore {
	return &EventStore{maxBytes: maxBytes, keepDone: keepDone, sessions: map[string]*storedSession{}}
}

// Open implements mcp.EventStore. A session is opened with its standalone
// stream (""), before any other; a stream of a session that is not open
// (closed already, by a write racing its end) is not made, so that nothing
// outlives SessionClosed.
func (s *EventStore) Open(_ context.Context, session, stream string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[session]
	if ss == nil {
		if stream != "" {
			return nil
		}
		ss = &storedSession{streams: map[string]*storedStream{}}
		s.sessions[session] = ss
	}
	if ss.streams[stream] == nil {
		ss.streams[stream] = &storedStream{}
	}
	return nil
}

// Append implements mcp.EventStore. The events of a stream that is not
// open (forgotten, or its session closed) are dropped.
func (s *EventStore) Append(_ context.Context, session, stream string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[session].get(stream)
	if st == nil {
		return nil
	}
	st.data = append(st.data, data)
	st.size += len(data)
	s.bytes += len(data)
	s.purge(st)
	return nil
}

// After implements mcp.EventStore: the events after index, or
// mcp.ErrEventsPurged when one of them is gone, or the stream is.
func (s *EventStore) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var data [][]byte
	var err error
	st := s.sessions[session].get(stream)
	switch start := index + 1 - st.firstIndex(); {
	case st == nil:
		err = fmt.Errorf("stream %q of session %q: %w", stream, session, mcp.ErrEventsPurged)
	case start < 0:
		err = fmt.Errorf("event %d of stream %q: %w", index+1, stream, mcp.ErrEventsPurged)
	case start < len(st.data):
		data = slices.Clone(st.data[start:])
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// get is the session's stream, or nil; ss may be nil.
func (ss *storedSession) get(stream string) *storedStream {
	if ss == nil {
		return nil
	}
	return ss.streams[stream]
}

// firstIndex is the stream index of the first event kept; st may be nil.
func (st *storedStream) firstIndex() int {
	if st == nil {
		return 0
	}
	return st.first
}

// SessionClosed implements mcp.EventStore: the session's events are
// dropped, and later ones of it are not kept.
func (s *EventStore) SessionClosed(_ context.Context, session string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[session]; ss != nil {
		for _, st := range ss.streams {
			s.bytes -= st.size
		}
		s.liveDone -= len(ss.done)
		delete(s.sessions, session)
	}
	return nil
}

// StreamDone records that a stream is complete: no more events will come,
// and once keepDone later ones of its session are complete too it is
// forgotten. A stream not open, or complete already, is left as it is.
func (s *EventStore) StreamDone(session, stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[session]
	st := ss.get(stream)
	if st == nil || st.done {
		return
	}
	st.done = true
	ss.done = append(ss.done, stream)
	s.done = append(s.done, streamRef{session, stream})
	s.liveDone++
	if len(ss.done) > s.keepDone {
		s.forget(ss, ss.done[0])
	}
	if len(s.done) > 2*s.liveDone+64 {
		s.done = slices.DeleteFunc(s.done, func(r streamRef) bool {
			st := s.sessions[r.session].get(r.stream)
			return st == nil || !st.done
		})
	}
}

// Sessions reports how many sessions the store holds events of: those
// opened and not closed.
func (s *EventStore) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// forget drops a completed stream of ss; s.mu is held.
func (s *EventStore) forget(ss *storedSession, stream string) {
	st := ss.streams[stream]
	s.bytes -= st.size
	delete(ss.streams, stream)
	ss.done = slices.DeleteFunc(ss.done, func(d string) bool { return d == stream })
	s.liveDone--
}

// purge drops events until the store holds at most maxBytes, or only the
// events of keep; s.mu is held.
func (s *EventStore) purge(keep *storedStream) {
	for s.bytes > s.maxBytes && len(s.done) > 0 {
		r := s.done[0]
		s.done = s.done[1:]
		ss := s.sessions[r.session]
		if st := ss.get(r.stream); st != nil && st.done {
			s.forget(ss, r.stream)
		}
	}
	for s.bytes > s.maxBytes {
		dropped := false
		for _, ss := range s.sessions {
			for _, st := range ss.streams {
				if st == keep && len(st.data) <= 1 || len(st.data) == 0 {
					continue
				}
				s.bytes -= len(st.data[0])
				st.size -= len(st.data[0])
				st.data[0] = nil
				st.data = st.data[1:]
				st.first++
				dropped = true
			}
		}
		if !dropped {
			return
		}
	}
}

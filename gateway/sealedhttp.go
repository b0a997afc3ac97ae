package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
)

// Sealed sessions on the HTTP front (sessionseal.go): the id a session of
// the handshake era is issued, a copy of one another replica issued
// (adopt), and what such a copy refuses.

// replicaHeader names, on every answer of /mcp when ids are sealed, the
// replica that answered: what a balancer learns the replicas' names from
// to route on the name a sealed id starts with (docs/deploy.md).
const replicaHeader = "Mcp-Gateway-Replica"

// Replica is this replica's name in the session ids it seals, "" when it
// seals none (no shared key, or stateless).
func (h *HTTPFront) Replica() string {
	if h.seal == nil {
		return ""
	}
	return h.seal.Replica()
}

// maxDeleted bounds the sealed ids a replica remembers as deleted.
const maxDeleted = 4096

// newID returns the id of a session that r's initialize (in msgs) opens:
// its state sealed, valid until expires, when the replicas share a key;
// else, or when the state seals too large, a random id (expires zero).
func (h *HTTPFront) newID(r *http.Request, msgs []inMsg) (id string, expires time.Time) {
	if h.seal == nil {
		return rand.Text(), time.Time{}
	}
	for i := range msgs {
		if msgs[i].Method != "initialize" {
			continue
		}
		now := time.Now()
		st := h.g.stateOf(msgs[i].Params, identity(PrincipalOf(r.Context())), h.g.profileOf(r.Context()), now)
		if id := h.seal.seal(st); id != "" {
			return id, time.Unix(st.Expires, 0)
		}
		h.g.log.Warn("http session of this replica only: its client's state seals larger than an id may be", "client", st.Client, "max_bytes", streamhttp.MaxSealedID)
		break
	}
	return rand.Text(), time.Time{}
}

// adopt serves a sealed id this replica holds no session for: if it opens
// for r's caller, a session is made of what it holds, registered under
// the id, and returned (nil for a DELETE, which it answers); else r is
// answered 404 (ok false), as for any unknown session. The session is a
// copy (httpSession.issuer) when another replica issued it; one this
// replica issued (before it restarted, or since the session idled out
// here) is its own again.
func (h *HTTPFront) adopt(w http.ResponseWriter, r *http.Request, id string) (s *httpSession, ok bool) {
	st, issuer, err := h.seal.open(id, identity(PrincipalOf(r.Context())), h.g.profileOf(r.Context()), time.Now())
	if err != nil {
		h.g.log.Debug("http session id refused", "reason", err)
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return nil, false
	}
	expires := time.Unix(st.Expires, 0)
	owner := sessionOwner(r)
	h.mu.Lock()
	if _, gone := h.deleted[id]; gone {
		h.mu.Unlock()
		refuseHTTP(w, http.StatusNotFound, "session not found")
		return nil, false
	}
	if r.Method == http.MethodDelete {
		// Nothing of it here to end: it is not served here again.
		h.denyLocked(id, expires)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return nil, false
	}
	if s := h.sessions[id]; s != nil {
		h.mu.Unlock()
		return s, true // another request adopted it meanwhile
	}
	if !h.roomLocked(w, owner, true, false) {
		h.mu.Unlock()
		return nil, false
	}
	ctx, cancel := context.WithCancel(callerContext(h.ctx, r.Context()))
	// A copy keeps no events: its streams are never resumed here (GET
	// is the issuer's).
	store := h.opts.events
	if issuer != h.seal.Replica() {
		store = nil
	}
	s = newHTTPSession(h.sessionOptions(id, store, cancel))
	s.expires = expires
	if issuer != h.seal.Replica() {
		s.issuer = issuer
	}
	forget := h.addLocked(id, owner, s)
	h.mu.Unlock()
	f := h.start(ctx, s, frontOptions{declared: st.declared(), sealed: true, issuer: s.issuer}, forget)
	if f == nil {
		forget()
		refuseHTTP(w, http.StatusServiceUnavailable, "shutting down")
		return nil, false
	}
	s.front.Store(f)
	h.g.log.Debug("http session served from its sealed id", "client", st.Client, "issuer", issuer)
	return s, true
}

// sealedExpired reports whether s, the session of id, is a sealed one past
// its expiry, and then ends it.
func (h *HTTPFront) sealedExpired(id string, s *httpSession) bool {
	if s.expires.IsZero() || !time.Now().After(s.expires) {
		return false
	}
	h.mu.Lock()
	h.removeLocked(id)
	h.mu.Unlock()
	_ = s.Close()
	return true
}

// servesCopy reports whether r can be served by s, a copy of a session
// another replica issued; when not, it answers r with why. The copy
// serves POSTs of requests and notifications, and DELETE; what needs the
// issuing replica is refused: a GET (the standalone stream, a stream to
// resume) with 405, which a client takes as a server without a
// standalone stream, and the client's answers to requests (which only the
// issuer makes) with 421 Misdirected Request.
func (h *HTTPFront) servesCopy(w http.ResponseWriter, r *http.Request, s *httpSession, msgs []inMsg) bool {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Allow", "POST, DELETE")
		refuseHTTP(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method Not Allowed: this session's event streams are served by replica %q, which issued it; replica %q serves its POSTs only (route GET on the Mcp-Session-Id before its first dot, docs/deploy.md)", s.issuer, h.seal.Replica()))
		return false
	case http.MethodPost:
		for i := range msgs {
			if !msgs[i].IsCall() && !msgs[i].IsNotification() {
				refuseHTTP(w, http.StatusMisdirectedRequest, fmt.Sprintf("Misdirected Request: this answers a request of replica %q, which issued the session and waits for it; replica %q made none (route the session's requests on the Mcp-Session-Id before its first dot, docs/deploy.md)", s.issuer, h.seal.Replica()))
				return false
			}
		}
	}
	return true
}

// denyLocked remembers that id was deleted, until it expires: this
// replica does not serve it again. The others do until it expires —
// they share nothing but the key (docs/deploy.md). The memory is bounded
// (maxDeleted): the expired go first, then any. h.mu is held.
func (h *HTTPFront) denyLocked(id string, expires time.Time) {
	if expires.IsZero() {
		return // a random id: gone with its session
	}
	if h.deleted == nil {
		h.deleted = make(map[string]time.Time)
	}
	if len(h.deleted) >= maxDeleted {
		now := time.Now()
		for k, until := range h.deleted {
			if now.After(until) {
				delete(h.deleted, k)
			}
		}
		for k := range h.deleted {
			if len(h.deleted) < maxDeleted {
				break
			}
			delete(h.deleted, k)
		}
	}
	h.deleted[id] = expires
}

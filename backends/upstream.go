package backends

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/upstream"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// Each person's own credentials upstream (docs/teams.md): a remote server
// with upstream_auth is reached per caller. Its backend (the parent) has
// no session of its own: each caller — CallOptions.Caller, the person the
// HTTP front authenticated — gets a session of their own, a backend of the
// parent's configuration whose requests carry that caller's credential
// (callerAuth), kept in the parent's callerPool under the caller's
// subject. Nobody's request ever goes through another's session, nor
// through a shared one: a request without a caller is refused
// (*CallerError).
//
// The parent is Starting until a caller's session is ready, then Ready.
// Each caller is shown the lists of their own session (callerlists.go),
// private in the cache hints of 2026-07-28; the parent's own surface is
// the first session's, for what is not per caller (its state, the
// servers' instructions and capabilities). Its supervisor is the pool's
// run: idle sessions closed, all of them at its end.
//
// A mode's Source (sourceFor) gives a caller's credential; the
// per_user_login one is in upstream_login.go.

// Caller is the person a request is made for, as the HTTP front
// authenticated them. It is read only once made.
type Caller struct {
	// Subject identifies the person: "SUBJECT@ISSUER". Sessions and
	// tokens are kept per (Subject, server).
	Subject string
	// Token is the bearer token the caller presented to the gateway (an
	// access token, or an ID token where the client sends one); it is
	// never logged.
	Token string
	// Claims are the token's verified claims (aud among them); read only.
	Claims map[string]any
	// Expires is when Token stops being valid (zero: unknown). A
	// credential got from it is not used past it.
	Expires time.Time
}

// String is the caller's subject: printing a caller, or logging it, never
// shows its token.
func (c *Caller) String() string { return c.Subject }

// requestCallerKey carries, in a backend request's context (Hooks.Request),
// the subject of the caller whose session made it.
type requestCallerKey struct{}

// RequestCaller is the subject (Caller.Subject) of the caller whose own
// session of a server reached per caller made the backend request of ctx
// (Hooks.Request): such a request is that person's, and goes to no other
// client. "" for a request of a server shared by everyone.
func RequestCaller(ctx context.Context) string {
	s, _ := ctx.Value(requestCallerKey{}).(string)
	return s
}

// Token is one caller's credential for one server.
type Token struct {
	Value  string    // the bearer token
	Expiry time.Time // zero: unknown (kept for defaultTokenLife)
}

// Source gives a caller's credential for a server: one per server with
// upstream_auth, chosen by its mode (sourceFor). Token is called when the
// caller's session needs a credential and has none that is fresh — the
// first request, shortly before the last one expires, after the server
// refused it with a 401 — never twice at once for one (caller, server):
// callerAuth serialises the calls and caches the result. It may block
// (a token endpoint's round trip) and must honour ctx.
//
// The errors a client should see as such are *CallerError (no usable
// credential: say why) and *SignInError (per_user_login: the person has
// not signed in to the server; the error carries the URL to do it).
type Source interface {
	Token(ctx context.Context, c *Caller) (Token, error)
}

// CallerError is a request refused for want of a caller's credential:
// no caller at all (stdio, the command line, a gateway without OAuth), a
// token not meant for the server (passthrough), or one the token endpoint
// would not exchange.
type CallerError struct {
	Server string
	Reason string
}

func (e *CallerError) Error() string {
	return fmt.Sprintf("server %s is reached with each caller's own credential (upstream_auth), and %s", e.Server, e.Reason)
}

// SignInError is a request of a person who has not signed in to a
// per_user_login server yet, or whose sign-in ended: URL is where they
// sign in (through the gateway), once.
type SignInError struct {
	Server  string
	Subject string
	URL     string
}

func (e *SignInError) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("server %s needs you to sign in to it first", e.Server)
	}
	return fmt.Sprintf("server %s needs you to sign in to it first: open %s", e.Server, e.URL)
}

// The defaults of the per-caller sessions' limits (Options).
const (
	DefaultMaxCallerSessions = 1000
	DefaultCallerIdle        = 10 * time.Minute
	// defaultTokenLife is how long a token is used whose expiry is not
	// known.
	defaultTokenLife = 5 * time.Minute
	// maxRefreshMargin bounds how long before its expiry a token is
	// replaced: a quarter of its life, at most this.
	maxRefreshMargin = 30 * time.Second
)

// sourceFor returns server s's Source, by its upstream_auth mode.
func (m *Manager) sourceFor(s config.Server) (Source, error) {
	a := s.UpstreamAuth
	switch a.Mode {
	case config.UpstreamTokenExchange, config.UpstreamJWTBearer:
		x := &upstream.Exchanger{
			Grant: upstream.GrantTokenExchange, TokenURL: a.TokenURL, Audience: a.Audience, Resource: a.Resource,
			Scopes: a.Scopes, ClientID: a.ClientID, KeyID: a.ClientKeyID, SubjectType: upstream.TypeAccessToken,
			HTTP: &http.Client{Timeout: config.CallTimeout(s, m.opts.DefaultTimeout)},
		}
		if a.Mode == config.UpstreamJWTBearer {
			x.Grant = upstream.GrantJWTBearer
		}
		if a.SubjectTokenType == "id_token" {
			x.SubjectType = upstream.TypeIDToken
		}
		if a.ClientSecretEnv != "" {
			if x.Secret = m.getenv(a.ClientSecretEnv); x.Secret == "" {
				return nil, fmt.Errorf("upstream_auth.client_secret_env: %s is not set", a.ClientSecretEnv)
			}
		}
		if a.ClientKeyFile != "" {
			k, err := upstream.ReadKey(a.ClientKeyFile)
			if err != nil {
				return nil, fmt.Errorf("upstream_auth.client_key_file: %w", err)
			}
			x.Key = k
		}
		return exchangeSource{s.Name, x}, nil
	case config.UpstreamPassthrough:
		return passthroughSource{s.Name, s.UpstreamAudience()}, nil
	case config.UpstreamPerUserLogin:
		return m.perUserLogin(s)
	}
	return nil, fmt.Errorf("upstream_auth mode %q is not known", a.Mode)
}

// getenv looks name up in the gateway's environment (Options.Environ).
func (m *Manager) getenv(name string) string {
	for i := len(m.environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(m.environ[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// exchangeSource is token_exchange's and jwt_bearer's Source.
type exchangeSource struct {
	server string
	x      *upstream.Exchanger
}

func (e exchangeSource) Token(ctx context.Context, c *Caller) (Token, error) {
	v, exp, err := e.x.Exchange(ctx, c.Token)
	var ue *upstream.Error
	if errors.As(err, &ue) {
		return Token{}, &CallerError{Server: e.server, Reason: "your token could not be exchanged for one of it: " + ue.Error()}
	}
	if err != nil {
		return Token{}, fmt.Errorf("exchange the caller's token: %w", err)
	}
	return Token{Value: v, Expiry: exp}, nil
}

// passthroughSource is passthrough's Source: the caller's own token, when
// it is meant for the server (its aud names audience). A token meant for
// the gateway, or for another server, is never passed on: a server that
// received it could use it as the caller at the gateway or there.
type passthroughSource struct {
	server, audience string
}

func (p passthroughSource) Token(_ context.Context, c *Caller) (Token, error) {
	if !upstream.AudienceOK(c.Claims["aud"], p.audience) {
		return Token{}, &CallerError{Server: p.server, Reason: fmt.Sprintf("your token is not meant for it (its audience does not name %s), so it is not passed on", p.audience)}
	}
	return Token{Value: c.Token, Expiry: c.Expires}, nil
}

// callerAuth authorizes one caller's session's requests (the remote
// transport's authorizer): the caller's credential from the server's
// Source, fetched once and kept until shortly before it expires.
type callerAuth struct {
	server string
	source Source
	// follows: the credential is the caller's token itself (passthrough),
	// so a new token of the caller's replaces it at once.
	follows bool
	now     func() time.Time
	caller  atomic.Pointer[Caller] // the caller's newest request's

	// refused is the Source's last answer when it was the caller's own
	// refusal (*SignInError, *CallerError): a session that ended for it
	// (signed out upstream mid-session) fails its calls with it (explain).
	refused atomic.Pointer[refusal]

	mu     sync.Mutex // one Source.Token at a time: a single flight
	tok    Token
	from   string    // the caller token tok was got with
	issued time.Time // when tok was got
}

func newCallerAuth(server string, source Source, c *Caller) *callerAuth {
	_, follows := source.(passthroughSource)
	a := &callerAuth{server: server, source: source, follows: follows, now: time.Now}
	a.caller.Store(c)
	return a
}

// Header implements the remote transport's authorizer.
func (a *callerAuth) Header(ctx context.Context) (string, error) {
	v, err := a.token(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + v, nil
}

// token returns the caller's credential, getting a new one when the one
// kept is not fresh.
func (a *callerAuth) token(ctx context.Context) (string, error) {
	c := a.caller.Load()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok.Value != "" && a.fresh(c) {
		return a.tok.Value, nil
	}
	t, err := a.source.Token(ctx, c)
	var se *SignInError
	var ce *CallerError
	if errors.As(err, &se) || errors.As(err, &ce) {
		a.refused.Store(&refusal{err})
	} else {
		a.refused.Store(nil)
	}
	if err != nil {
		a.tok = Token{}
		return "", err
	}
	if t.Value == "" {
		return "", fmt.Errorf("no credential for %s", a.server)
	}
	now := a.now()
	if t.Expiry.IsZero() {
		t.Expiry = now.Add(defaultTokenLife)
	}
	if !c.Expires.IsZero() && c.Expires.Before(t.Expiry) {
		// Never used past the credential it was got with.
		t.Expiry = c.Expires
	}
	a.tok, a.from, a.issued = t, c.Token, now
	return t.Value, nil
}

type refusal struct{ err error }

// explain is done of a call on the caller's session, which replaces the
// session's end as the call's error with the caller's own refusal when
// that is why the session ended: a caller signed out while their session
// ran then gets the sign-in error (and its link), not "crashed".
func (a *callerAuth) explain(done func(json.RawMessage, error)) func(json.RawMessage, error) {
	return func(res json.RawMessage, err error) {
		var se *ServerError
		if r := a.refused.Load(); r != nil && errors.As(err, &se) {
			err = r.err
		}
		done(res, err)
	}
}

// fresh reports whether the kept token may be used for c's request: it is
// not within its refresh margin of expiry (a quarter of its life, at most
// maxRefreshMargin), and, when it is the caller's token itself, c did not
// present another; a.mu is held.
func (a *callerAuth) fresh(c *Caller) bool {
	if a.follows && c.Token != a.from {
		return false
	}
	margin := min(a.tok.Expiry.Sub(a.issued)/4, maxRefreshMargin)
	return a.now().Before(a.tok.Expiry.Add(-margin))
}

// Refused implements the remote transport's authorizer: a 401 drops the
// kept credential, and the request is tried once more with a new one; a
// 403 is the server's refusal of this caller.
func (a *callerAuth) Refused(_ context.Context, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized {
		a.mu.Lock()
		a.tok = Token{}
		a.mu.Unlock()
		return nil
	}
	return &CallerError{Server: a.server, Reason: "it refused your credential (HTTP 403)"}
}

// callerPool is a per-caller server's sessions, one per subject, at most
// max, the least recently used closed first; one idle for idle is closed.
type callerPool struct {
	parent *backend
	source Source
	err    error // the Source could not be made: every request fails with it
	max    int
	idle   time.Duration

	mu     sync.Mutex
	ctx    context.Context // the parent's run; nil before it starts
	closed bool
	byKey  map[string]*list.Element // subject → element of lru, a *callerSession
	lru    *list.List               // most recently used first
}

// callerSession is one caller's session of a per-caller server.
type callerSession struct {
	subject string
	b       *backend // nil until the first credential was got
	auth    *callerAuth
	used    time.Time // guarded by callerPool.mu
}

func newCallerPool(parent *backend, source Source, err error) *callerPool {
	o := parent.m.opts
	p := &callerPool{parent: parent, source: source, err: err, max: o.MaxCallerSessions, idle: o.CallerIdle,
		byKey: map[string]*list.Element{}, lru: list.New()}
	if p.max <= 0 {
		p.max = DefaultMaxCallerSessions
	}
	if p.idle <= 0 {
		p.idle = DefaultCallerIdle
	}
	return p
}

// noCaller is the refusal of a request that has no caller.
func (p *callerPool) noCaller() error {
	return &CallerError{Server: p.parent.cfg.Name, Reason: "this request has none: it needs an HTTP client authenticated by OAuth (gateway.http.auth: oauth); stdio and the command line have no caller"}
}

// ready returns c's session's backend when it is ready, for a call that
// must not wait (StartToolCall), after recording c as its newest
// request's caller; else nil.
func (p *callerPool) ready(c *Caller) *backend {
	if c == nil || c.Subject == "" {
		return nil
	}
	p.mu.Lock()
	e := p.byKey[c.Subject]
	if e == nil {
		p.mu.Unlock()
		return nil
	}
	cs := e.Value.(*callerSession)
	b := cs.b
	if b != nil {
		p.lru.MoveToFront(e)
		cs.used = time.Now()
	}
	p.mu.Unlock()
	if b == nil || !b.isReady() {
		return nil
	}
	cs.auth.caller.Store(c)
	return b
}

// acquire returns c's session's backend (maybe still starting), making
// it when c has none or its last one ended: c's credential is got first
// (a single flight per subject), so a caller without one is refused
// before any session is made, with the Source's error.
func (p *callerPool) acquire(ctx context.Context, c *Caller) (*backend, error) {
	if p.err != nil {
		return nil, &ServerError{Server: p.parent.cfg.Name, State: Failed, Reason: p.err.Error()}
	}
	if c == nil || c.Subject == "" {
		return nil, p.noCaller()
	}
	p.mu.Lock()
	if p.closed || p.ctx == nil {
		p.mu.Unlock()
		return nil, &ServerError{Server: p.parent.cfg.Name, State: Stopped, Reason: "stopped"}
	}
	var cs *callerSession
	if e := p.byKey[c.Subject]; e != nil {
		cs = e.Value.(*callerSession)
		p.lru.MoveToFront(e)
	} else {
		cs = &callerSession{subject: c.Subject, auth: newCallerAuth(p.parent.cfg.Name, p.source, c)}
		cs.auth.now = p.parent.m.now
		p.byKey[c.Subject] = p.lru.PushFront(cs)
	}
	cs.used = time.Now()
	p.mu.Unlock()
	cs.auth.caller.Store(c)

	// The credential first, outside the pool's lock: callerAuth makes
	// concurrent first requests of one caller wait for one Token.
	if _, err := cs.auth.token(ctx); err != nil {
		p.mu.Lock()
		if e := p.byKey[c.Subject]; e != nil && e.Value.(*callerSession) == cs && cs.b == nil {
			p.removeLocked(e) // no credential, no session: nothing is kept for it
		}
		p.mu.Unlock()
		return nil, err
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &ServerError{Server: p.parent.cfg.Name, State: Stopped, Reason: "stopped"}
	}
	e := p.byKey[c.Subject]
	if e == nil || e.Value.(*callerSession) != cs {
		// Evicted meanwhile (more callers than max at once): the
		// request fails as on a stopped session rather than keep one
		// beyond the bound.
		return nil, &ServerError{Server: p.parent.cfg.Name, State: Stopped, Reason: "too many callers' sessions at once; try again"}
	}
	// Only a caller with a credential takes a place, so the bound is
	// enforced now, not when the entry was made: a caller refused one
	// (no sign-in, a token not exchanged or not meant for the server)
	// never closes another's session.
	p.lru.MoveToFront(e)
	p.evictLocked()
	if cs.b == nil || cs.b.ended() {
		cs.b = p.parent.m.newCallerBackend(p.parent, cs.subject, cs.auth)
		p.parent.m.startCaller(p.ctx, cs.b)
	}
	return cs.b, nil
}

// evictLocked closes the least recently used sessions beyond max; p.mu
// is held.
func (p *callerPool) evictLocked() {
	for p.lru.Len() > p.max {
		p.removeLocked(p.lru.Back())
	}
}

// removeLocked closes the session of e and forgets it; p.mu is held.
// Requests in flight on it fail as on a stopped server.
func (p *callerPool) removeLocked(e *list.Element) {
	cs := p.lru.Remove(e).(*callerSession)
	delete(p.byKey, cs.subject)
	if cs.b != nil && cs.b.stop != nil {
		cs.b.retired.Store(true)
		cs.b.stop()
	}
}

// closeIdle closes the sessions unused since before now-idle.
func (p *callerPool) closeIdle(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := p.lru.Back(); e != nil; {
		prev := e.Prev()
		if now.Sub(e.Value.(*callerSession).used) >= p.idle {
			p.removeLocked(e)
		}
		e = prev
	}
}

// run is the parent's supervisor: it serves ctx's lifetime, closing idle
// sessions, then closes them all and waits for them to end.
func (p *callerPool) run(ctx context.Context) {
	t := time.NewTicker(max(p.idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			p.closeIdle(now)
		case <-ctx.Done():
			p.mu.Lock()
			p.closed = true
			var done []chan struct{}
			for e := p.lru.Front(); e != nil; e = e.Next() {
				if b := e.Value.(*callerSession).b; b != nil {
					done = append(done, b.done)
				}
			}
			for p.lru.Len() > 0 {
				p.removeLocked(p.lru.Front())
			}
			p.mu.Unlock()
			for _, d := range done {
				<-d
			}
			return
		}
	}
}

// sessions is the number of sessions the pool keeps.
func (p *callerPool) sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lru.Len()
}

// startPool starts per-caller server b, its pool run under the Manager's
// run context; its sessions start with their callers' first requests. It
// is settled at once: nothing is waited for until a caller comes. m.mu is
// held.
func (m *Manager) startPool(b *backend) {
	ctx, cancel := context.WithCancel(m.runCtx)
	b.stop, b.began = cancel, time.Now()
	b.pool.mu.Lock()
	b.pool.ctx = ctx
	b.pool.mu.Unlock()
	b.mu.Lock()
	if b.pool.err != nil {
		b.setStateLocked(Failed, b.pool.err.Error())
	} else {
		// Ready once a caller's session listed its tools (publish);
		// until then a call by a name with its prefix still reaches it
		// (and gets the caller's error), as a server's that is starting.
		b.setStateLocked(Starting, "reached with each caller's own credential: no caller's session yet")
	}
	b.mu.Unlock()
	b.settle()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(b.done)
		defer cancel()
		b.pool.run(ctx)
	}()
}

// newCallerBackend returns the backend of one caller's session of
// per-caller server parent, not started: the parent's configuration,
// authorized by auth, never restarted (the next request makes another).
func (m *Manager) newCallerBackend(parent *backend, subject string, auth *callerAuth) *backend {
	s := parent.cfg
	s.Restart = "never"
	b := m.bareBackend(s)
	b.parent, b.upstream, b.caller = parent, auth, subject
	b.log = b.log.With("caller", subject)
	return b
}

// startCaller starts a caller's session's supervisor under ctx, the
// parent's run.
func (m *Manager) startCaller(ctx context.Context, b *backend) {
	ctx, cancel := context.WithCancel(ctx)
	b.stop, b.began = cancel, time.Now()
	b.mu.Lock()
	b.setStateLocked(Starting, "")
	b.mu.Unlock()
	m.wg.Add(1) // the parent's supervisor is running: wg is not zero
	go func() {
		defer m.wg.Done()
		defer close(b.done)
		defer cancel()
		b.run(ctx)
	}()
}

// publish makes the surface of caller session b its parent's (Ready, its
// instructions and capabilities), when it is the first ready session's,
// b's own changed, or that of a session that took over from one closed.
// The lists each client is shown are its caller's own session's
// (ToolsFor), not these.
func (parent *backend) publish(b *backend) {
	b.mu.Lock()
	if b.state != Ready {
		b.mu.Unlock()
		return
	}
	sf := b.live
	b.mu.Unlock()
	hints := make(map[string]CacheHint, 4)
	for _, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		h := sf.lists.hints[method]
		h.Private = true
		hints[method] = h
	}
	sf.lists.hints = hints
	// What every client is shown is one person's session's lists; a
	// person's resources (their documents, their repositories) are not
	// another's to see, so only the templates are shown. A read goes to
	// the reader's own session, listed or not.
	var templates []Resource
	for _, r := range sf.lists.resources {
		if r.Template {
			templates = append(templates, r)
		}
	}
	sf.lists.resources = templates
	parent.mu.Lock()
	prev := parent.publisher
	parent.mu.Unlock()
	if prev != nil && prev != b && !prev.retired.Load() && !prev.ended() {
		return
	}
	parent.mu.Lock()
	if parent.publisher != prev || parent.state != Ready && parent.state != Starting {
		parent.mu.Unlock()
		return
	}
	moved := parent.publisher != b || parent.state != Ready
	parent.publisher, parent.live = b, sf
	if parent.state != Ready {
		parent.setStateLocked(Ready, "")
	}
	parent.mu.Unlock()
	if moved {
		// The server's state (Ready) is everyone's; its lists are each
		// caller's own (ToolsFor), whose changes b's caller is told
		// of (listsChanged).
		parent.m.notify.changed(parent.cfg.Name)
	}
}

// isReady reports whether b is Ready with a session.
func (b *backend) isReady() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == Ready && b.conn != nil
}

// ended reports whether b's session ended for good: a caller's session
// is never restarted, so a new request makes a new one.
func (b *backend) ended() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state != Starting && b.state != Ready
}

// CallerSessions is the number of sessions per-caller server keeps open
// (0 for any other).
func (m *Manager) CallerSessions(server string) int {
	b := m.set.Load().byName[server]
	if b == nil || b.pool == nil {
		return 0
	}
	return b.pool.sessions()
}

// Attach makes caller c's sessions of the servers reached per caller,
// waiting within for them to be ready: a client's first lists then show
// such a server's tools, as c's own session lists them (ToolsFor). A
// failure is the requests' to report, not Attach's. Without a caller, or
// with sessions ready, it returns at once.
func (m *Manager) Attach(ctx context.Context, c *Caller, within time.Duration) {
	if c == nil || c.Subject == "" || within <= 0 {
		return
	}
	var wg sync.WaitGroup
	deadline := time.Now().Add(within)
	for _, b := range m.backends() {
		if b.pool == nil || b.pool.ready(c) != nil {
			continue
		}
		wg.Go(func() {
			_, _, _ = b.awaitSession(ctx, deadline, CallOptions{Caller: c}, "initialize", "")
		})
	}
	wg.Wait()
}

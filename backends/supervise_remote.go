package backends

import (
	"context"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/remote"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// startRemote connects to a url: backend (internal/remote) with run's
// headers (b's configuration with its secrets' values) and starts its
// conn; on failure it returns the reason. ctx bounds the connection's
// opening.
func (b *backend) startRemote(ctx context.Context, run config.Server) (*session, string) {
	name := b.cfg.Name
	opts := remote.Options{
		Server:  name,
		URL:     b.cfg.URL,
		SSE:     useSSE(b.cfg.Transport, b.cfg.URL),
		Headers: run.Headers,
		Log:     b.log,
	}
	switch {
	case b.upstream != nil:
		// One caller's session: the caller's credential, and no shared
		// one (a server with upstream_auth has none: config).
		opts.Auth, opts.Headers = b.upstream, nil
	case b.auth != nil:
		opts.Auth = b.auth
	}
	opts.ToolHeaders = b.toolHeaders
	r, err := remote.Dial(ctx, opts)
	if err != nil {
		return nil, config.RedactURL(err.Error()) // an HTTP error names the URL
	}
	return b.startPeer(peer{w: r, r: r.Reader(), failure: r.Failure, shutdown: r.Shutdown, attrs: []any{"url", config.RedactURL(b.cfg.URL)}}), ""
}

// peer is a session's transport other than a child's pipes: a remote
// server's (internal/remote), or an in-process peer's (Options.Dial).
type peer struct {
	w        io.WriteCloser // the conn's writes; a Write must not wait for the peer
	r        io.Reader      // the peer's messages, as lines
	failure  func() string  // why the session ended, once r did ("" if unknown)
	shutdown func()         // ends the transport, after the conn was shut down
	attrs    []any          // what the log says of it
}

// startPeer starts a conn on p: the handshake, the forwarding and the
// supervision are those of a child's pipes; the end of p's input is the
// end of the session, which the supervisor treats as a crash.
func (b *backend) startPeer(p peer) *session {
	name := b.cfg.Name
	b.mu.Lock()
	b.startedAt = time.Now()
	b.mu.Unlock()
	c := b.newConn(p.w, rpcconn.PipeCap{}) // a remote's Write only queues
	go c.ReadLoop(p.r)

	crashed := make(chan string, 1)
	stop := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-c.EOF():
		case <-stop:
			return
		}
		select {
		case <-stop:
			return
		default:
		}
		reason := p.failure()
		if reason == "" {
			reason = "the connection ended"
		}
		state := Crashed
		if le := b.auth.RefusedLogin(); le != nil {
			state, reason = NeedsLogin, le.Error()
		}
		b.sessionEnded(c, state, reason, nil, crashed)
	}()
	teardown := func() {
		close(stop)
		<-watchDone
		c.Shutdown(&ServerError{Server: name, State: Stopped, Reason: "stopped"})
		p.shutdown()
		<-c.EOF()
		c.Wait()
	}
	return &session{c: c, crashed: crashed, teardown: teardown, attrs: p.attrs}
}

// toolHeaders gives the Mcp-Param header bindings of one of the backend's
// tools, as it listed it (found once per list, by decodeLists).
func (b *backend) toolHeaders(name string) []wire.HeaderBinding {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live.lists.headers[name]
}

// useSSE reports whether a url: backend starts with the legacy HTTP+SSE
// transport: when its transport says so, or its URL's path ends in /sse.
// Otherwise it is Streamable HTTP, falling back to HTTP+SSE when the server
// refuses it with a 4xx (internal/remote).
func useSSE(transport, rawURL string) bool {
	if transport == "sse" {
		return true
	}
	if transport == "http" {
		return false
	}
	u, err := url.Parse(rawURL)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse")
}

package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The legacy HTTP+SSE transport (protocol 2024-11-05) of a remote: one GET
// event stream carries every message of the server, and the client POSTs
// its messages to the endpoint the stream's first event names.

// connectSSE opens a legacy HTTP+SSE session: the GET stream, whose first
// event names the endpoint for POSTs; the stream's messages are then
// delivered until it ends, which ends the session.
func (r *remote) connectSSE(ctx context.Context, retryAuth bool) error {
	// The stream lives as long as the transport; ctx bounds only its
	// opening (the response and the endpoint event).
	sctx, cancel := context.WithCancel(r.ctx)
	stop := context.AfterFunc(ctx, cancel)
	defer stop() // on the ways out before the stream is kept
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, r.opts.URL, nil)
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if err := r.setHeaders(ctx, req); err != nil {
		cancel()
		return err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		cancel()
		return causeOf(err)
	}
	if a := r.opts.Auth; a != nil && retryAuth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		aerr := a.refused(ctx, req, resp)
		resp.Body.Close()
		cancel()
		if aerr != nil {
			return aerr
		}
		return r.connectSSE(ctx, false)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		cancel()
		return errors.New(resp.Status)
	}
	sr := newSSEReader(resp.Body)
	ev, err := sr.next()
	if err == nil && ev.name != "endpoint" {
		err = fmt.Errorf("the first event is %q, not endpoint", ev.name)
	}
	var endpoint *url.URL
	if err == nil {
		endpoint, err = resp.Request.URL.Parse(strings.TrimSpace(string(ev.data)))
	}
	if err == nil && !sameOrigin(endpoint, r.opts.URL) {
		// Every POST carries the server's headers and token.
		err = fmt.Errorf("the endpoint is on another origin (%s) than the server's URL; refused", endpoint.Host)
	}
	if err == nil && !stop() {
		err = ctx.Err()
	}
	if err != nil {
		resp.Body.Close()
		cancel()
		return fmt.Errorf("HTTP+SSE endpoint: %w", err)
	}
	r.mu.Lock()
	r.sse, r.endpoint = true, endpoint.String()
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		defer resp.Body.Close()
		for {
			ev, err := sr.next()
			if err != nil {
				if r.ctx.Err() == nil {
					r.fail("the server closed the SSE stream")
				}
				return
			}
			if len(ev.data) == 0 || ev.name != "" && ev.name != "message" {
				continue
			}
			r.deliver(ev.data)
		}
	}()
	return nil
}

// sameOriginRedirect follows redirects only within base's origin (an
// http URL may move to https on the same host): Go's client carries every
// header but Authorization and cookies to another host, and the configured
// headers often hold a key.
func sameOriginRedirect(base string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		upgrade := *req.URL
		if upgrade.Scheme == "https" {
			upgrade.Scheme = "http"
		}
		if !sameOrigin(req.URL, base) && !sameOrigin(&upgrade, base) {
			return fmt.Errorf("redirected to another origin (%s); refused", req.URL.Host)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// sameOrigin reports whether u has the scheme and host of the URL base.
func sameOrigin(u *url.URL, base string) bool {
	b, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Host, b.Host)
}

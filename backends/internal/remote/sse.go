package remote

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
func (r *Transport) connectSSE(ctx context.Context, retryAuth bool) error {
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
		aerr := a.Refused(ctx, req, resp)
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

package answer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// This file is the single retry layer for the Responses API. openai-go's own
// retries are switched off (option.WithMaxRetries(0)) so that one tools/call
// makes at most request.max_retries+1 HTTP requests.

// retryPolicy shapes the waits between attempts. The zero value means the
// defaults; tests shrink the durations.
type retryPolicy struct {
	base          time.Duration // first backoff; 0 means 500ms
	max           time.Duration // backoff cap; 0 means 8s
	maxRetryAfter time.Duration // longest Retry-After honoured; 0 means 60s (longer: give up)
}

func (p retryPolicy) backoff(attempt int) time.Duration {
	base, ceil := p.base, p.max
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if ceil <= 0 {
		ceil = 8 * time.Second
	}
	d := base
	for i := 1; i < attempt && d < ceil; i++ {
		d *= 2
	}
	d = min(d, ceil)
	// Jitter: up to a quarter less, so that concurrent callers spread out.
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d
}

// retryAfter parses retry-after-ms and Retry-After (seconds or an HTTP
// date). ok is false when neither is present and valid.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return durationOf(ms, time.Millisecond), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if sec, err := strconv.ParseFloat(v, 64); err == nil && sec >= 0 {
			return durationOf(sec, time.Second), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

// durationOf is n units (n >= 0, not NaN) as a Duration, the longest one
// for more: an absurd header is a long wait, never a negative one that
// would retry at once.
func durationOf(n float64, unit time.Duration) time.Duration {
	if d := n * float64(unit); d < math.MaxInt64 {
		return time.Duration(d)
	}
	return math.MaxInt64
}

// noRetry reports whether the API said not to retry (x-should-retry:
// false), as its SDKs honour it.
func noRetry(h http.Header) bool { return h != nil && h.Get("X-Should-Retry") == "false" }

// retryableStatus reports whether an HTTP status is worth another attempt.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// attemptInfo is what one attempt saw on the wire.
type attemptInfo struct {
	status int
	header http.Header
	body   bytes.Buffer // the first bodyPrefix bytes of the response body
	// readErr is the error, other than io.EOF, that ended reading the body.
	readErr error
}

const bodyPrefix = 2048

// capture records the status, headers and the start of the body of the
// response to one attempt.
func (ai *attemptInfo) capture(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil {
		ai.status = res.StatusCode
		ai.header = res.Header
		if res.Body != nil {
			res.Body = &prefixBody{ReadCloser: res.Body, ai: ai}
		}
	}
	return res, err
}

type prefixBody struct {
	io.ReadCloser
	ai *attemptInfo
}

func (b *prefixBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := bodyPrefix - b.ai.body.Len(); room > 0 && n > 0 {
		b.ai.body.Write(p[:min(n, room)])
	}
	if err != nil && err != io.EOF && b.ai.readErr == nil {
		b.ai.readErr = err
	}
	return n, err
}

// send makes the request with up to cfg.Request.MaxRetries retries. It
// returns the response, ctx's error when ctx ended, or an *APIError.
// step is told what is happening (CallOptions.Step).
func (s *Service) send(ctx context.Context, svc *responses.ResponseService, params responses.ResponseNewParams, query, model string, step func(string)) (*responses.Response, error) {
	cfg := s.opts.Config
	maxRetries := max(cfg.Request.MaxRetries, 0)
	timeout := time.Duration(cfg.Request.TimeoutMS) * time.Millisecond
	for attempt := 1; ; attempt++ {
		step(fmt.Sprintf("asking %s (attempt %d of %d)", model, attempt, maxRetries+1))
		resp, info, timedOut, err := s.attempt(ctx, svc, params, timeout)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			s.debug("cancelled", "attempt", attempt, "reason", ctx.Err().Error())
			return nil, ctx.Err()
		}
		aerr, retryable := classify(err, info, timedOut, cfg.Request.TimeoutMS)
		s.debug("openai error",
			"attempt", attempt,
			"status", aerr.Status,
			"name", aerr.Name,
			"type", aerr.Type,
			"code", aerr.Code,
			"msg", s.redact(aerr.Message, query),
			"body", truncateRunes(s.redact(info.body.String(), query), 300),
			"retryable", retryable)
		if !retryable || attempt > maxRetries {
			return nil, aerr
		}
		delay, ok := retryAfter(info.header, s.now())
		if ok {
			limit := s.retry.maxRetryAfter
			if limit <= 0 {
				limit = 60 * time.Second
			}
			if delay > limit {
				s.debug("retry-after too long, giving up", "attempt", attempt, "retryAfter", delay)
				return nil, aerr
			}
		} else {
			delay = s.retry.backoff(attempt)
		}
		s.debug("retrying", "attempt", attempt, "of", maxRetries+1, "delay", delay)
		step(fmt.Sprintf("waiting %s to retry after %s", delay.Round(100*time.Millisecond), retryCause(aerr)))
		if err := sleep(ctx, delay); err != nil {
			s.debug("cancelled", "attempt", attempt, "reason", err.Error())
			return nil, err
		}
	}
}

// attempt makes one request bounded by timeout (0: no bound of its own).
// timedOut reports that the attempt's own deadline, not ctx, ended it.
func (s *Service) attempt(ctx context.Context, svc *responses.ResponseService, params responses.ResponseNewParams, timeout time.Duration) (resp *responses.Response, info *attemptInfo, timedOut bool, err error) {
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	info = &attemptInfo{}
	resp, err = svc.New(actx, params, option.WithMiddleware(info.capture))
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		timedOut = true
	}
	return resp, info, timedOut, err
}

// classify turns a failed attempt into an *APIError and says whether another
// attempt may help.
func classify(err error, info *attemptInfo, timedOut bool, timeoutMS int) (*APIError, bool) {
	if timedOut {
		return &APIError{
			Message: fmt.Sprintf("Request timed out after %d ms (request.timeout_ms)", timeoutMS),
			Status:  info.status,
			Name:    NameTimeoutError,
			// Deliberately not wrapping context.DeadlineExceeded: the
			// caller's context did not end, and errors.Is(err, ctx.Err())
			// must not mistake this for a cancellation.
			Err: fmt.Errorf("attempt exceeded request.timeout_ms (%d ms)", timeoutMS),
		}, false
	}
	var apiErr *responses.Error
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(apiErr.Message)
		if msg == "" {
			msg = statusMessage(apiErr.StatusCode)
		}
		// A 429 for an exhausted quota (not a rate) never succeeds on
		// another attempt.
		return &APIError{
			Message: msg,
			Status:  apiErr.StatusCode,
			Type:    apiErr.Type,
			Code:    apiErr.Code,
			Name:    NameAPIError,
			Err:     err,
		}, retryableStatus(apiErr.StatusCode) && apiErr.Code != "insufficient_quota" && !noRetry(info.header)
	}
	if info.status >= 400 {
		// An error status whose body is not the API's JSON error (a proxy's
		// HTML page, say).
		return &APIError{Message: statusMessage(info.status), Status: info.status, Name: NameAPIError, Err: err},
			retryableStatus(info.status) && !noRetry(info.header)
	}
	if (info.status == 0 && isConnectionError(err)) || info.readErr != nil {
		// No response, or the connection broke while the body was read.
		return &APIError{Message: "Connection error: " + err.Error(), Status: info.status, Name: NameConnectionError, Err: err}, true
	}
	if info.status == 0 {
		return &APIError{Message: "Request failed: " + err.Error(), Name: NameAPIError, Err: err}, false
	}
	return &APIError{
		Message: "Invalid response from the Responses API: " + err.Error(),
		Status:  info.status,
		Name:    NameAPIError,
		Err:     err,
	}, false
}

func isConnectionError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne)
}

func statusMessage(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("HTTP %d %s", code, t)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// retryCause names why an attempt failed, for a progress message: the HTTP
// status, or the error's name.
func retryCause(e *APIError) string {
	if e.Status != 0 {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return e.Name
}

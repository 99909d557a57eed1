package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// An APIError is a model API's answer that is not a reply.
type APIError struct {
	Provider string
	// Status is the HTTP status, or 0 for an error event inside a stream.
	Status int
	// Type is the API's error type, such as overloaded_error, when it says.
	Type    string
	Message string
	// RetryAfter is what the server asked us to wait, if it said.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(" API")
	if e.Status != 0 {
		fmt.Fprintf(&b, " %d", e.Status)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " %s", e.Type)
	}
	if e.Message != "" {
		// One line, whatever the server sent (an HTML error page, say).
		fmt.Fprintf(&b, ": %s", strings.Join(strings.Fields(e.Message), " "))
	}
	return b.String()
}

// A StreamError is a connection that broke or a stream that ended before
// its reply was complete. It is worth retrying.
type StreamError struct {
	Provider string
	Err      error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("%s API: connection lost: %v", e.Provider, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// Retryable reports whether a provider's error is worth retrying: rate
// limits, server errors, overload (529 and its in-stream twin) and dropped
// connections are; any other 4xx is final. retryAfter is the server's
// requested delay, or 0.
func Retryable(err error) (retry bool, retryAfter time.Duration) {
	var se *StreamError
	if errors.As(err, &se) {
		return true, 0
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		return false, 0
	}
	switch {
	case ae.Status == http.StatusTooManyRequests, ae.Status == http.StatusRequestTimeout, ae.Status >= 500:
		return true, ae.RetryAfter
	case ae.Status == 0 || ae.Status == http.StatusOK:
		// An error event inside a stream: the status was 200, so only the
		// type tells.
		switch ae.Type {
		case "overloaded_error", "api_error", "rate_limit_error", "timeout_error", "server_error":
			return true, ae.RetryAfter
		}
	}
	return false, 0
}

// retryAfter reads a response's Retry-After (seconds or an HTTP date) or
// retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// errorBody extracts the type and message from an API's error body, which
// both APIs shape as {"error": {"type": ..., "message": ...}} (OpenAI-
// compatible servers vary: some send a bare string or a top-level message).
func errorBody(raw string) (typ, msg string) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal([]byte(raw), &env) != nil {
		return "", strings.TrimSpace(shorten(raw, 500))
	}
	var inner struct {
		Type    string `json:"type"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(env.Error, &inner) == nil && (inner.Message != "" || inner.Type != "") {
		return inner.Type, inner.Message
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil && s != "" {
		return env.Type, s
	}
	if env.Message != "" {
		return env.Type, env.Message
	}
	return "", strings.TrimSpace(shorten(raw, 500))
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redirectPolicy refuses redirects: a model API has no reason to send one,
// and following it would carry the key's header (X-Api-Key is not one of
// the headers net/http strips) to whatever host it names.
func redirectPolicy(req *http.Request, via []*http.Request) error {
	return fmt.Errorf("%w to %s", errRedirect, req.URL.Redacted())
}

var errRedirect = errors.New("refusing to follow a redirect (a model API should not redirect, and the key would follow it)")

// NewHTTPClient returns the HTTP client both providers use.
func NewHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: redirectPolicy}
}

// DefaultIdleTimeout is how long a model stream may stay silent before the
// connection is taken for dead and the request retried. It is generous
// because a local server may think for minutes over a long prompt before
// its first byte.
const DefaultIdleTimeout = 10 * time.Minute

// An idleWatch cancels a request whose stream has gone quiet: a stalled
// connection would otherwise hang the run forever, and it is as worth
// retrying as a dropped one.
type idleWatch struct {
	d     time.Duration
	timer *time.Timer
	fired atomic.Bool
}

func watchIdle(ctx context.Context, d time.Duration) (context.Context, *idleWatch, context.CancelFunc) {
	if d <= 0 {
		d = DefaultIdleTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &idleWatch{d: d}
	w.timer = time.AfterFunc(d, func() {
		w.fired.Store(true)
		cancel()
	})
	return ctx, w, func() {
		w.timer.Stop()
		cancel()
	}
}

func (w *idleWatch) kick() { w.timer.Reset(w.d) }

// stalled reports whether the watch, not the caller, ended the request.
func (w *idleWatch) stalled(parent context.Context) error {
	if w.fired.Load() && parent.Err() == nil {
		return fmt.Errorf("no data for %s", w.d)
	}
	return nil
}

package responses

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The API's rate limits, as its x-ratelimit-* headers say them on the
// WebSocket upgrade's answer and on every HTTP answer: per limit (requests,
// tokens) its size, what is left of it and when it is full again. A Client
// keeps the latest it saw (rateBoard); status, usage_update's _meta and a
// notice under lowShare left show it.

// RateLimit is one limit as the headers said it. A plain value.
type RateLimit struct {
	Limit     int64
	Remaining int64
	Reset     time.Time // when it is whole again
}

// RateLimits is what the latest headers said of the limits; a nil member
// was not said. At is when they were read. A plain value.
type RateLimits struct {
	Requests, Tokens *RateLimit
	At               time.Time
}

// Known reports whether any limit was said.
func (r RateLimits) Known() bool { return r.Requests != nil || r.Tokens != nil }

// lowShare is the share of a limit left under which the user is told.
const lowShare = 0.10

// low names the limits with less than lowShare left ("requests", "tokens").
func (r RateLimits) low() []string {
	var out []string
	for _, l := range []struct {
		name string
		l    *RateLimit
	}{{"requests", r.Requests}, {"tokens", r.Tokens}} {
		if l.l != nil && l.l.Limit > 0 && float64(l.l.Remaining) < lowShare*float64(l.l.Limit) {
			out = append(out, l.name)
		}
	}
	return out
}

// parseRateLimits reads the x-ratelimit-* headers of an answer read at now.
func parseRateLimits(h http.Header, now time.Time) RateLimits {
	r := RateLimits{At: now}
	r.Requests = parseRateLimit(h, "requests", now)
	r.Tokens = parseRateLimit(h, "tokens", now)
	return r
}

func parseRateLimit(h http.Header, kind string, now time.Time) *RateLimit {
	limit, err1 := strconv.ParseInt(h.Get("x-ratelimit-limit-"+kind), 10, 64)
	left, err2 := strconv.ParseInt(h.Get("x-ratelimit-remaining-"+kind), 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	l := &RateLimit{Limit: limit, Remaining: left}
	if d, ok := parseReset(h.Get("x-ratelimit-reset-" + kind)); ok {
		l.Reset = now.Add(d)
	}
	return l
}

// parseReset reads a reset as the API writes it ("1s", "6m0s", "20ms"),
// or a number of seconds.
func parseReset(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	return 0, false
}

// rateBoard is a Client's latest rate limits and the notice they call
// for, told once. Guarded by its own mutex, taken alone; it lives as long
// as its Client.
type rateBoard struct {
	mu     sync.Mutex
	latest RateLimits
	low    string // the limits low at the last reading, joined
	notice string
}

// note records the headers of an answer; those without rate limits change
// nothing.
func (b *rateBoard) note(h http.Header) {
	r := parseRateLimits(h, time.Now())
	if !r.Known() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.latest = r
	low := strings.Join(r.low(), " and ")
	switch {
	case low == "":
		b.notice = "" // recovered before anyone was told
	case low != b.low:
		b.notice = lowNotice(r)
	}
	b.low = low
}

// lowNotice says which limits are nearly used up and when they reset.
func lowNotice(r RateLimits) string {
	var parts []string
	for _, l := range []struct {
		name string
		l    *RateLimit
	}{{"requests", r.Requests}, {"tokens", r.Tokens}} {
		if l.l == nil || l.l.Limit <= 0 || float64(l.l.Remaining) >= lowShare*float64(l.l.Limit) {
			continue
		}
		p := fmt.Sprintf("%d of %d %s left", l.l.Remaining, l.l.Limit, l.name)
		if !l.l.Reset.IsZero() {
			p += " until " + ClockTime(l.l.Reset)
		}
		parts = append(parts, p)
	}
	return "hearth: the API's rate limit is nearly reached: " + strings.Join(parts, ", ") + "."
}

// ClockTime is t as a user reads it on a clock: 14:32, or 14:32:05 when t
// is less than a minute away.
func ClockTime(t time.Time) string {
	if time.Until(t) < time.Minute {
		return t.Local().Format("15:04:05")
	}
	return t.Local().Format("15:04")
}

// RateLimits returns the latest rate limits the API said.
func (c *Client) RateLimits() RateLimits {
	c.rates.mu.Lock()
	defer c.rates.mu.Unlock()
	return c.rates.latest
}

// TakeRateNotice returns, once, what the user should know of the rate
// limits (one is nearly used up); "" when nothing new.
func (c *Client) TakeRateNotice() string {
	c.rates.mu.Lock()
	defer c.rates.mu.Unlock()
	n := c.rates.notice
	c.rates.notice = ""
	return n
}

// ResetOf is when a rate-limited request may go again, as its refusal
// says: the headers of an HTTP 429 (Retry-After, or the reset of the
// limits used up), or the "try again in" of its message (a WebSocket's
// error event has no headers). False when err is no rate limit or says no
// time.
func ResetOf(err error, now time.Time) (time.Time, bool) {
	var ae *APIError
	if !errors.As(err, &ae) || CauseOf(err) != CauseRateLimit {
		return time.Time{}, false
	}
	if !ae.ResetAt.IsZero() {
		return ae.ResetAt, true
	}
	if m := tryAgain.FindStringSubmatch(ae.Message); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			unit := time.Second
			if strings.EqualFold(m[2], "ms") {
				unit = time.Millisecond
			}
			return now.Add(time.Duration(v * float64(unit))), true
		}
	}
	return time.Time{}, false
}

// refusedUntil is when the limits of an HTTP 429's headers allow another
// request: its Retry-After, else the latest reset of a limit with nothing
// left; zero when they do not say.
func refusedUntil(h http.Header, now time.Time) time.Time {
	if d, ok := parseReset(h.Get("Retry-After")); ok {
		return now.Add(d)
	}
	r := parseRateLimits(h, now)
	var until time.Time
	for _, l := range []*RateLimit{r.Requests, r.Tokens} {
		if l != nil && l.Remaining <= 0 && l.Reset.After(until) {
			until = l.Reset
		}
	}
	return until
}

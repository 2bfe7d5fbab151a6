package sim

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The API's rate limits, as its x-ratelimit-* headers tell them: every
// answer to a WebSocket upgrade and every HTTP answer of /responses says,
// for requests and tokens, the limit, what is left of it in the current
// one-minute window and how long until that window ends (a duration as the
// API writes it: "1s", "6m0s", "20ms"). The window counts every create,
// whichever transport, and its Raw bytes / 4 as tokens. The sim refuses
// nothing on these counts; Options.RateLimited and Server.RateLimit make it
// refuse the next requests with 429 and a reset, as a used-up limit does.

// Default limits, a tier-1 key's order of magnitude.
const (
	DefaultRateLimitRequests = 5000
	DefaultRateLimitTokens   = 800000
)

// rateWindow is the Server's current one-minute window of requests and
// tokens. One per Server, guarded by its own mutex, taken alone.
type rateWindow struct {
	mu               sync.Mutex
	start            time.Time // zero: nothing counted yet
	requests, tokens int64
}

// count adds one request of raw bytes to the window.
func (w *rateWindow) count(bytes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rollLocked(time.Now())
	if w.start.IsZero() {
		w.start = time.Now()
	}
	w.requests++
	w.tokens += int64(bytes / 4)
}

func (w *rateWindow) rollLocked(now time.Time) {
	if !w.start.IsZero() && now.Sub(w.start) >= time.Minute {
		w.start, w.requests, w.tokens = time.Time{}, 0, 0
	}
}

// headers sets the rate-limit headers of an answer given now.
func (w *rateWindow) headers(h http.Header, o Options) {
	w.mu.Lock()
	now := time.Now()
	w.rollLocked(now)
	reset := time.Duration(0)
	if !w.start.IsZero() {
		reset = time.Minute - now.Sub(w.start)
	}
	used := map[string]int64{"requests": w.requests, "tokens": w.tokens}
	w.mu.Unlock()
	for kind, limit := range map[string]int64{"requests": o.rateLimit(o.RateLimitRequests, DefaultRateLimitRequests),
		"tokens": o.rateLimit(o.RateLimitTokens, DefaultRateLimitTokens)} {
		h.Set("x-ratelimit-limit-"+kind, strconv.FormatInt(limit, 10))
		h.Set("x-ratelimit-remaining-"+kind, strconv.FormatInt(max(0, limit-used[kind]), 10))
		h.Set("x-ratelimit-reset-"+kind, apiDuration(reset))
	}
}

func (o Options) rateLimit(set, def int64) int64 {
	if set > 0 {
		return set
	}
	return def
}

// refusedHeaders are the headers of a 429 that used up the requests'
// limit until reset.
func refusedHeaders(h http.Header, reset time.Duration) {
	h.Set("x-ratelimit-remaining-requests", "0")
	h.Set("x-ratelimit-reset-requests", apiDuration(reset))
}

// apiDuration writes d as the API's headers do: "20ms", "1.5s", "6m0s".
func apiDuration(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return d.Round(time.Millisecond).String()
}

// resetSeconds writes d as the API's rate-limit messages do: "1.5s",
// "90s", "250ms".
func resetSeconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// RateLimit makes the Server refuse its next n creates (either transport)
// with 429 rate_limit_exceeded whose reset is reset (the message's "try
// again in", and over HTTP the x-ratelimit-reset-requests header with
// nothing left): FaultRateLimit with Count n and Delay reset.
func (s *Server) RateLimit(n int, reset time.Duration) {
	s.InjectFault(Fault{Kind: FaultRateLimit, Count: n, Delay: reset})
}

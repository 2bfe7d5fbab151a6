package sim

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The upgrade's answer and every HTTP answer tell the rate limits; a
// create counts against them; RateLimit refuses the next creates with 429,
// its reset in the message and, over HTTP, in the headers.
func TestRateLimitHeaders(t *testing.T) {
	srv := New(Options{Reasoning: ReasoningNever, RateLimitRequests: 10})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	base := ts.URL + "/v1"

	conn, resp, err := dialRaw(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if h := resp.Header; h.Get("x-ratelimit-limit-requests") != "10" || h.Get("x-ratelimit-remaining-requests") != "10" ||
		h.Get("x-ratelimit-limit-tokens") != "800000" || h.Get("x-ratelimit-reset-requests") == "" {
		t.Fatalf("upgrade's headers %v", h)
	}
	body := map[string]any{"model": "m", "stream": true, "store": false, "input": []any{userMsg("hello")}}
	r := postResponses(t, base, body, nil)
	io.Copy(io.Discard, r.Body)
	if h := r.Header; h.Get("x-ratelimit-remaining-requests") != "9" || h.Get("x-ratelimit-remaining-tokens") == "800000" {
		t.Fatalf("an answer's headers %v", h)
	}
	srv.RateLimit(1, 2*time.Second)
	r = postResponses(t, base, body, nil)
	e := decodeHTTPError(t, r, 429, "rate_limit_exceeded")
	if !strings.Contains(e.Message, "Please try again in 2s.") || r.Header.Get("x-ratelimit-remaining-requests") != "0" ||
		r.Header.Get("x-ratelimit-reset-requests") != "2s" {
		t.Fatalf("429 %q, headers %v", e.Message, r.Header)
	}
	r = postResponses(t, base, body, nil)
	io.Copy(io.Discard, r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("after the refused one: HTTP %d", r.StatusCode)
	}
}

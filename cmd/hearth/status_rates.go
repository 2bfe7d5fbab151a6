package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/hearthd/hearth/rpc"
)

// rateLine says a workspace's rate limits in a short line: what is left of
// each limit and when the last of them is whole again, e.g. "rate limits:
// 4990/5000 requests, 790k/800k tokens left; whole again at 14:32:10".
func rateLine(r rpc.RateLimits, now time.Time) string {
	var parts []string
	var reset time.Time
	for _, l := range []struct {
		name string
		l    *rpc.RateLimit
	}{{"requests", r.Requests}, {"tokens", r.Tokens}} {
		if l.l == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s/%s %s", countShort(l.l.Remaining), countShort(l.l.Limit), l.name))
		if l.l.Reset != nil && l.l.Reset.After(reset) {
			reset = *l.l.Reset
		}
	}
	s := "rate limits: " + strings.Join(parts, ", ") + " left"
	if reset.After(now) {
		s += "; whole again at " + reset.Local().Format("15:04:05")
	}
	return s
}

// countShort writes n with k or M past ten thousand.
func countShort(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

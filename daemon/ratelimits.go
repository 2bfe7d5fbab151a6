package daemon

import (
	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/responses"
)

// The API's rate limits where the user sees them: usage_update's _meta
// (rpc.MetaRateLimits) and status. The notices (nearly used up, a parked
// turn) come from the session, through its sink's Notice.

// usageUpdate is the usage_update of s: how full its context is, and the
// workspace's rate limits when the API said them.
func usageUpdate(s *openSession, used, size int) *acp.SessionUsageUpdate {
	u := &acp.SessionUsageUpdate{Used: used, Size: size}
	if r := rateLimits(s.ws.client.RateLimits()); r != nil {
		u.Meta = map[string]any{rpc.MetaRateLimits: r}
	}
	return u
}

// rateLimits is r as status and _meta show it; nil when nothing was said.
func rateLimits(r responses.RateLimits) *rpc.RateLimits {
	if !r.Known() {
		return nil
	}
	return &rpc.RateLimits{Requests: rateLimit(r.Requests), Tokens: rateLimit(r.Tokens), At: r.At}
}

func rateLimit(l *responses.RateLimit) *rpc.RateLimit {
	if l == nil {
		return nil
	}
	out := &rpc.RateLimit{Limit: l.Limit, Remaining: l.Remaining}
	if !l.Reset.IsZero() {
		t := l.Reset
		out.Reset = &t
	}
	return out
}

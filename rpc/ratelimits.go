package rpc

import "time"

// MetaRateLimits is the _meta key of a usage_update that carries the API's
// rate limits (RateLimits) as the workspace's latest answer said them.
const MetaRateLimits = "hearth/rateLimits"

// RateLimits is what the model API's x-ratelimit-* headers said last, on
// the WebSocket upgrade or an HTTP answer: a nil limit was not said. At is
// when they were read.
type RateLimits struct {
	Requests *RateLimit `json:"requests,omitempty"`
	Tokens   *RateLimit `json:"tokens,omitempty"`
	At       time.Time  `json:"at"`
}

// RateLimit is one limit: its size, what is left of it and when it is whole
// again (omitted when not said).
type RateLimit struct {
	Limit     int64      `json:"limit"`
	Remaining int64      `json:"remaining"`
	Reset     *time.Time `json:"reset,omitempty"`
}

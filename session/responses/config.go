package responses

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// DefaultBaseURL is the OpenAI API base used when OPENAI_BASE_URL is unset.
const DefaultBaseURL = "https://api.openai.com/v1"

// LaneMode is HEARTH_LANES: auto, on or off.
type LaneMode string

const (
	LanesAuto LaneMode = "auto" // lanes, until the server ignores or refuses stream_id
	LanesOn   LaneMode = "on"   // lanes, whatever the server does
	LanesOff  LaneMode = "off"  // one WebSocket per conversation, no stream_id
)

// ParseLaneMode reads HEARTH_LANES; "" is auto.
func ParseLaneMode(s string) (LaneMode, error) {
	switch m := LaneMode(strings.TrimSpace(s)); m {
	case "":
		return LanesAuto, nil
	case LanesAuto, LanesOn, LanesOff:
		return m, nil
	}
	return "", fmt.Errorf("HEARTH_LANES=%q: want auto, on or off", s)
}

// Config is how a Client reaches the Responses API: the endpoint, the key
// and the transport's limits. A plain value; a Client holds a copy,
// replaced whole by Reconfigure.
type Config struct {
	BaseURL string // https://host/v1; the WebSocket is the same base with ws(s) + /responses
	APIKey  string // sent only in the Authorization header; never logged or stored

	// Lanes says whether each conversation gets its own stream_id lane on
	// the workspace's shared WebSocket (LanesOn), each its own WebSocket
	// (LanesOff), or lanes until the server shows it has none (LanesAuto,
	// the default).
	Lanes LaneMode

	// KeepaliveInterval: a WebSocket quiet this long is pinged; no frame
	// within KeepaliveTimeout after the ping means it is dead (laptop
	// sleep, NAT drop). Negative disables the pings.
	KeepaliveInterval time.Duration
	KeepaliveTimeout  time.Duration

	// DisableCompression turns permessage-deflate off (benchmarks compare).
	DisableCompression bool

	HandshakeTimeout time.Duration // WebSocket upgrade
	MaxMessage       int64         // read limit of one server frame

	// ReadWindow is how long a WebSocket's reader lets deltas gather
	// before it reads them, once one has arrived (readGate): a delta waits
	// at most this long, and a streamed answer costs a wake-up per window
	// rather than per token. Negative: every frame is read at once.
	ReadWindow time.Duration

	// ForceHTTP uses HTTP+SSE from the start, as after a fallback.
	ForceHTTP bool

	MaxConnAge    time.Duration // rotate a WebSocket between requests after this (the server's limit is 60 min)
	DialAttempts  int           // WebSocket handshakes tried (with backoff) before falling back to HTTP
	DialBudget    time.Duration // total time those attempts may take
	FallbackRetry time.Duration // after a fallback for any reason but HTTP 426, try the WebSocket again after this (doubling per fallback, at most 5 min)

	// Dial makes the WebSockets' TCP connections; nil is a net.Dialer.
	// Tests give one whose connections stall.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// rootCAs are the roots wss trusts (nil: the system's); tests set it.
	rootCAs *x509.CertPool
}

// defaultReadWindow is Config.ReadWindow's default: a dozen tokens of a
// model streaming 1,000 a second, under what a reader notices.
const defaultReadWindow = 12 * time.Millisecond

// WithDefaults fills the zero fields with hearth's defaults.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Lanes == "" {
		c.Lanes = LanesAuto
	}
	if c.KeepaliveInterval == 0 {
		c.KeepaliveInterval = 30 * time.Second
	}
	if c.KeepaliveTimeout == 0 {
		c.KeepaliveTimeout = 20 * time.Second
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 15 * time.Second
	}
	if c.MaxMessage == 0 {
		c.MaxMessage = 64 << 20
	}
	if c.ReadWindow == 0 {
		c.ReadWindow = defaultReadWindow
	}
	if c.MaxConnAge == 0 {
		c.MaxConnAge = 55 * time.Minute
	}
	if c.DialAttempts == 0 {
		c.DialAttempts = 5 // with backoff: ~3 s of a server's blip before any fallback
	}
	if c.DialBudget == 0 {
		c.DialBudget = 20 * time.Second
	}
	if c.FallbackRetry == 0 {
		c.FallbackRetry = 30 * time.Second
	}
	return c
}

// websocketURL maps the HTTP base to the WebSocket endpoint: https → wss,
// http → ws, then /responses.
func (c Config) websocketURL() (string, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return "", fmt.Errorf("OPENAI_BASE_URL %q is not a URL", safeURL(c.BaseURL))
	}
	switch u.Scheme {
	case "https", "wss":
		u.Scheme = "wss"
	case "http", "ws":
		u.Scheme = "ws"
	default:
		return "", fmt.Errorf("OPENAI_BASE_URL %q: scheme must be http or https", safeURL(c.BaseURL))
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/responses"
	return u.String(), nil
}

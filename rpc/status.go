package rpc

import (
	"strings"
	"time"
)

// Status is the result of _hearth/status and exactly what `hearth status
// --json` prints. A value is a snapshot built per request; its JSON field
// names are stable (scripts read them).
type Status struct {
	Version string    `json:"version"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Socket  string    `json:"socket"`
	DataDir string    `json:"dataDir"`
	// Model is the model requests name: HEARTH_MODEL, else hearth's
	// default (each workspace's own is in WorkspaceStatus.Model).
	Model string `json:"model"`
	// Profile is what hearth knows of Model's family, with the
	// configuration's overrides applied.
	Profile Profile `json:"profile"`
	BaseURL string  `json:"baseUrl"`
	// APIKey is always masked with MaskSecret ("sk-...abcd", "(not set)");
	// the daemon never sends the key itself.
	APIKey    string `json:"apiKey"`
	Simulator bool   `json:"simulator"`
	// Clients counts the connections to the daemon (editors, hearth ask)
	// other than the one that asked for this status.
	Clients    int               `json:"clients"`
	Workspaces []WorkspaceStatus `json:"workspaces"`
	// Sessions counts the sessions in memory (open; of which idle: no
	// editor attached and no turn running) and those closed since the
	// daemon started: after being idle (HEARTH_SESSION_IDLE), or by their
	// last editor's session/close.
	Sessions SessionCounts `json:"sessions"`
}

// Profile is the model profile in effect (session.Profile, with
// HEARTH_CONTEXT_WINDOW and HEARTH_REASONING_EFFORT applied).
type Profile struct {
	Family string `json:"family"`
	// ContextWindow is the input window in tokens compaction works with; 0
	// when unknown.
	ContextWindow    int      `json:"contextWindow"`
	ReasoningLevels  []string `json:"reasoningLevels,omitzero"`
	Reasoning        string   `json:"reasoning"` // the effort requests ask for; "none" for none
	Images           bool     `json:"images"`
	ParallelTools    bool     `json:"parallelToolCalls"`
	ToolOutputTokens int      `json:"toolOutputTokens"`
	PatchStyle       string   `json:"patchStyle,omitzero"` // freeform, function; "" when apply_patch is not offered
	ShellStyle       string   `json:"shellStyle"`
}

// SessionCounts is the lifetime picture of a Status snapshot.
type SessionCounts struct {
	Open             int   `json:"open"`
	Idle             int   `json:"idle"`
	Closed           int64 `json:"closed"`
	WorkspacesClosed int64 `json:"workspacesClosed"`
}

// Workspace connection states reported in WorkspaceStatus.State: names
// editors and scripts read. The daemon reports the session client's state
// under them (daemon/status_test.go holds the two together).
const (
	WorkspaceConnecting   = "connecting"
	WorkspaceWarming      = "warming"
	WorkspaceReady        = "ready"
	WorkspaceStreaming    = "streaming"
	WorkspaceRewarming    = "re-warming"
	WorkspaceHTTPFallback = "http-fallback"
	WorkspaceClosed       = "closed"
)

// Transports reported in WorkspaceStatus.Transport.
const (
	TransportWebSocket = "ws"
	TransportHTTP      = "http"
)

// WorkspaceStatus is one open workspace in a Status snapshot: its model
// connection and request counters since the workspace opened.
type WorkspaceStatus struct {
	Root string `json:"root"`
	// Model is the model this workspace's requests name.
	Model string `json:"model"`
	// State is one of the Workspace* constants.
	State string `json:"state"`
	// Transport is TransportWebSocket or TransportHTTP.
	Transport string `json:"transport"`
	// ConnAgeMS is the age of the model connection in milliseconds.
	ConnAgeMS           int64 `json:"connAgeMs"`
	Sessions            int   `json:"sessions"`
	Lanes               int   `json:"lanes"`
	Handshakes          int64 `json:"handshakes"`
	Warmups             int64 `json:"warmups"`
	FullRequests        int64 `json:"fullRequests"`
	IncrementalRequests int64 `json:"incrementalRequests"`
	Retries             int64 `json:"retries"`
	Fallbacks           int64 `json:"fallbacks"`
	BytesSent           int64 `json:"bytesSent"`
	// BytesSaved is what sending each incremental request in full would
	// have cost more; never negative.
	BytesSaved int64 `json:"bytesSaved"`
	// LastTurnMS is the duration of the last completed turn in milliseconds.
	LastTurnMS int64 `json:"lastTurnMs"`
	// Connections is the number of live WebSockets (one, or one per session
	// with lanes off, or a second one past 32 lane names).
	Connections int `json:"connections"`
	// Fallback says why the workspace is on HTTP, when it is.
	Fallback string `json:"fallback,omitempty"`
	// LaneMode is "on", "off" (HEARTH_LANES=off), or "off: " and why the
	// endpoint was found to have no stream_id lanes.
	LaneMode string `json:"laneMode"`
	// Watch is how the workspace is watched: "inotify" ("fsnotify" off
	// Linux); "polling: " and why, with the fix; "partial: " and how much of
	// a tree past HEARTH_WATCH_MAX_DIRS; or "off: " and why not at all.
	Watch string `json:"watch,omitempty"`
	// Spare says a session is warmed ahead of time for the next session/new
	// here (HEARTH_SPARE).
	Spare bool `json:"spare"`
	// RateLimits are the model API's, as its latest answer said them; nil
	// before any said them.
	RateLimits *RateLimits `json:"rateLimits,omitempty"`
	// WireBytesSent and WireBytesReceived crossed the model connections'
	// sockets, after permessage-deflate: compare with BytesSent.
	WireBytesSent     int64 `json:"wireBytesSent"`
	WireBytesReceived int64 `json:"wireBytesReceived"`
	// Tokens are the responses' usage since the workspace opened.
	Tokens TokenUsage `json:"tokens"`
}

// TokenUsage is what the model API reported it processed: input tokens (of
// which Cached came from its prompt cache), output tokens (of which
// Reasoning were thinking). CacheHitRatio is Cached/Input.
type TokenUsage struct {
	Input         int64   `json:"input"`
	Cached        int64   `json:"cached"`
	Output        int64   `json:"output"`
	Reasoning     int64   `json:"reasoning"`
	CacheHitRatio float64 `json:"cacheHitRatio"`
}

// NewTokenUsage fills CacheHitRatio.
func NewTokenUsage(input, cached, output, reasoning int64) TokenUsage {
	u := TokenUsage{Input: input, Cached: cached, Output: output, Reasoning: reasoning}
	if input > 0 {
		u.CacheHitRatio = float64(cached) / float64(input)
	}
	return u
}

// ConnAge returns ConnAgeMS as a duration.
func (w WorkspaceStatus) ConnAge() time.Duration {
	return time.Duration(w.ConnAgeMS) * time.Millisecond
}

// MaskSecret returns a form of a secret safe to print: "(not set)" when empty,
// "****" when too short to show any of it, else its first three and last four
// characters ("sk-...abcd"). For URLs, see RedactURL.
func MaskSecret(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "(not set)"
	case len(s) < 12:
		return "****"
	default:
		return s[:3] + "..." + s[len(s)-4:]
	}
}

// ProbeResult is the result of _hearth/probe: whether the daemon reaches
// its model API with its key. Status is "ok", "warn" or "fail"; Detail says
// what happened and the fix, with the URL redacted and never the key.
type ProbeResult struct {
	Status    string `json:"status"`
	BaseURL   string `json:"baseUrl"`
	Simulator bool   `json:"simulator"`
	Detail    string `json:"detail"`
	ElapsedMS int64  `json:"elapsedMs"`
}

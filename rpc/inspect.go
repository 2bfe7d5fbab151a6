package rpc

import (
	"encoding/json"
	"time"
)

// InspectParams are the params of _hearth/inspect. With SessionID empty the
// daemon lists sessions (InspectResult.Sessions, at most Limit, newest
// first); with it set it returns that session's detail (InspectResult.Session,
// its last Limit turns). Limit 0 means the daemon's default. Built per call.
type InspectParams struct {
	SessionID string `json:"sessionId,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// InspectResult is the result of _hearth/inspect: exactly one of Sessions
// (listing) or Session (detail) is set. Built per call.
type InspectResult struct {
	Sessions []SessionInfo  `json:"sessions,omitempty"`
	Session  *SessionDetail `json:"session,omitempty"`
}

// SessionInfo summarises one stored session. Turns is the number of turns.
// Built per call from the store.
type SessionInfo struct {
	ID           string    `json:"sessionId"`
	Root         string    `json:"root"`
	Title        string    `json:"title,omitempty"`
	Mode         string    `json:"mode,omitempty"`
	Model        string    `json:"model,omitempty"`
	Turns        int       `json:"turns"`
	Created      time.Time `json:"created"`
	LastActivity time.Time `json:"lastActivity"`
	// Tokens sums the usage of every request of the session.
	Tokens TokenUsage `json:"tokens"`
}

// SessionDetail is one session in depth: its turns, conversation items and
// model requests. The turn list is "turnList" in JSON because the embedded
// SessionInfo already uses "turns" for the count. Built per call.
type SessionDetail struct {
	SessionInfo
	Turns    []TurnInfo    `json:"turnList"`
	Items    []ItemInfo    `json:"items"`
	Requests []RequestInfo `json:"requests"`
	// Compactions replaced older items by a summary in the model's view
	// (the items stay); oldest first.
	Compactions []CompactionInfo `json:"compactions,omitempty"`
}

// CompactParams names the session _hearth/compact compacts: its id or a
// unique prefix.
type CompactParams struct {
	SessionID string `json:"sessionId"`
}

// CompactResult is _hearth/compact's answer. Built per call.
type CompactResult struct {
	SessionID  string          `json:"sessionId"`
	StopReason string          `json:"stopReason"`
	Compaction *CompactionInfo `json:"compaction,omitempty"` // the one just made
}

// CompactionInfo is one compaction of a session. Built per call.
type CompactionInfo struct {
	ThroughSeq int64     `json:"throughSeq"` // the last item the summary replaces
	Reason     string    `json:"reason"`
	Summary    string    `json:"summary"`
	ResponseID string    `json:"responseId,omitempty"`
	Created    time.Time `json:"created"`
}

// TurnInfo is one prompt turn of a session. Built per call.
type TurnInfo struct {
	Seq        int       `json:"seq"`
	Status     string    `json:"status"`
	StopReason string    `json:"stopReason,omitempty"`
	Error      string    `json:"error,omitempty"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitzero"`
}

// ItemInfo is one conversation item (a Responses API input or output item)
// as stored: Data is its raw JSON. Built per call.
type ItemInfo struct {
	Seq    int64           `json:"seq"`
	Turn   int             `json:"turn"`
	Origin string          `json:"origin"`
	Type   string          `json:"type"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// RequestInfo is one request sent to the model API: which connection carried
// it, whether it was full or incremental (and why full), and its timing.
// Built per call.
type RequestInfo struct {
	ID                 int64      `json:"id"`
	Turn               int        `json:"turn"`
	Conn               string     `json:"conn"`
	Kind               string     `json:"kind"`
	FullReason         string     `json:"fullReason,omitempty"`
	PreviousResponseID string     `json:"previousResponseId,omitempty"`
	ResponseID         string     `json:"responseId,omitempty"`
	Status             string     `json:"status"`
	Error              string     `json:"error,omitempty"`
	BytesSent          int64      `json:"bytesSent"`
	InputItems         int        `json:"inputItems"`
	Sent               time.Time  `json:"sent"`
	FirstEventMS       int64      `json:"firstEventMs"`
	TotalMS            int64      `json:"totalMs"`
	Tokens             TokenUsage `json:"tokens"`
}

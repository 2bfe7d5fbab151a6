package session

import (
	"bytes"
	"encoding/json"
)

// linkView is what the incremental rule needs of the responses.Link a
// request goes out on.
type linkView interface {
	Transport() string
	Cached(lane string) string // the response the server holds for lane there
	Alive() bool
}

// baseline is what the server holds for a conversation: the last request in
// full (never the delta) and its response, on one connection and lane. It
// is replaced after every completed response and forgotten on any failure.
type baseline struct {
	conn       linkView
	lane       string
	settings   []byte
	input      []json.RawMessage // the last request's full input
	output     []json.RawMessage // what the server produced for it
	responseID string
	epoch      uint64 // the transcript's epoch it extends (transcript.View.Epoch)
}

// Reasons a request goes out in full; stored with the request and shown by
// inspect.
const (
	reasonNoBaseline    = "no previous response"
	reasonNewConnection = "new connection"
	reasonNotCached     = "previous response no longer cached on this lane"
	reasonSettings      = "instructions, tools or model changed"
	reasonNotPrefix     = "input does not extend the previous request"
	reasonDisabled      = "incremental requests disabled"
	reasonWarmup        = "warm-up"
	reasonHTTP          = "HTTP fallback: with store:false every request carries the whole conversation"
)

// plan decides between an incremental and a full request. A request is
// incremental — previous_response_id and only the new items — when it goes
// on the connection whose lane (its own, or a parent's for a fork) still
// holds the baseline's response, with the
// same settings byte for byte, and its input starts with the baseline's
// input and output; anything else is full. It returns the items to send,
// the previous response id ("" for a full request) and, for a full
// request, why.
func plan(b *baseline, conn linkView, set []byte, full []json.RawMessage, disabled bool) (send []json.RawMessage, prev string, reason string) {
	switch {
	case conn.Transport() == "http":
		return full, "", reasonHTTP
	case disabled:
		return full, "", reasonDisabled
	case b == nil:
		return full, "", reasonNoBaseline
	case b.conn != conn:
		return full, "", reasonNewConnection
	case conn.Cached(b.lane) != b.responseID:
		// The baseline's lane may be another lane of the connection: a
		// fork's first request continues its parent's latest response on a
		// lane of its own (stream_id routes, previous_response_id is lineage).
		return full, "", reasonNotCached
	case !bytes.Equal(b.settings, set):
		return full, "", reasonSettings
	}
	n := len(b.input) + len(b.output)
	if len(full) < n {
		return full, "", reasonNotPrefix
	}
	for i, it := range b.input {
		if !itemsEqual(it, full[i]) {
			return full, "", reasonNotPrefix
		}
	}
	for i, it := range b.output {
		if !itemsEqual(it, full[len(b.input)+i]) {
			return full, "", reasonNotPrefix
		}
	}
	// Only the new items; output items the server produced are never resent.
	// An empty delta is allowed.
	return full[n:], b.responseID, ""
}

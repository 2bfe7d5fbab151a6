package session

import (
	"encoding/json"

	"github.com/hearthd/hearth/session/transcript"
)

// TranscriptOf returns a copy of c's model view, for the tests: the
// committed items, or after a compaction the initial items, the summary and
// the items since.
func TranscriptOf(c *Conversation) []json.RawMessage {
	return c.tr.View().Items()
}

// ReplayForm is an item's replay form (session/transcript).
func ReplayForm(item json.RawMessage) json.RawMessage {
	form, _ := transcript.ReplayForm(item)
	return form
}

// NextInputOf is c's estimate of its next request's input tokens.
func NextInputOf(c *Conversation) int { return c.line.nextInput() }

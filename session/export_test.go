package session

import (
	"encoding/json"

	"github.com/hearthd/hearth/session/transcript"
)

// Transcript returns a copy of the model's view, for the tests: the
// committed items, or after a compaction the initial items, the summary and
// the items since.
func (c *Conversation) Transcript() []json.RawMessage {
	return c.tr.Items()
}

// ReplayForm is an item's replay form (replay.go).
func ReplayForm(item json.RawMessage) json.RawMessage {
	form, _ := transcript.ReplayForm(item)
	return form
}

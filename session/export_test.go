package session

import "encoding/json"

// Transcript returns a copy of the model's view, for the tests: the
// committed items, or after a compaction the initial items, the summary and
// the items since.
func (c *Conversation) Transcript() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.ledger.committed...)
}

// ReplayForm is an item's replay form (replay.go).
func ReplayForm(item json.RawMessage) json.RawMessage {
	form, _ := replayForm(item)
	return form
}

package session

import (
	"bytes"
	"encoding/json"
	"strings"
)

// messagePrefix is how every message of role made by inputMessage
// (DeveloperMessage, a UserMessage without images) begins in JSON, up to
// its text: what Told looks for, without decoding the other items.
func messagePrefix(role string) []byte {
	m := inputMessage(role, "")
	return m[:bytes.LastIndex(m, []byte(`""`))+1]
}

var (
	developerPrefix = messagePrefix("developer")
	userPrefix      = messagePrefix("user")
)

// Told returns the text of the latest developer or user message in the
// model's view (after a compaction: what the model still sees) whose one
// text begins with prefix, and whether there is one. The daemon tells the
// model its environment and its permissions this way, and tells them again
// only when they changed: what the model was told is read from the
// transcript, so it holds across restarts and compactions.
func (c *Conversation) Told(prefix string) (string, bool) {
	var text string
	_, ok := c.tr.View().Latest(func(raw json.RawMessage) bool {
		if !bytes.HasPrefix(raw, developerPrefix) && !bytes.HasPrefix(raw, userPrefix) {
			return false
		}
		parts := messageParts(raw)
		if len(parts) == 1 && strings.HasPrefix(parts[0].Text, prefix) {
			text = parts[0].Text
			return true
		}
		return false
	})
	return text, ok
}

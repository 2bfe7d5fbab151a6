package session

import (
	"bytes"
	"encoding/json"
	"strings"
)

// developerPrefix is how every DeveloperMessage's JSON begins, up to its
// text: what Told looks for, without decoding the other items.
var developerPrefix = func() []byte {
	m := DeveloperMessage("")
	return m[:bytes.LastIndex(m, []byte(`""`))+1]
}()

// Told returns the text of the latest developer message in the model's view
// (after a compaction: what the model still sees) whose text begins with
// prefix, and whether there is one. The daemon tells the model its
// environment this way, and tells it again only when it changed: what the
// model was told is read from the transcript, so it holds across restarts
// and compactions.
func (c *Conversation) Told(prefix string) (string, bool) {
	var text string
	_, ok := c.tr.View().Latest(func(raw json.RawMessage) bool {
		if !bytes.HasPrefix(raw, developerPrefix) {
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

package session

import (
	"bytes"
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
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.ledger.committed) - 1; i >= 0; i-- {
		raw := c.ledger.committed[i]
		if !bytes.HasPrefix(raw, developerPrefix) {
			continue
		}
		parts := messageParts(raw)
		if len(parts) == 1 && strings.HasPrefix(parts[0].Text, prefix) {
			return parts[0].Text, true
		}
	}
	return "", false
}

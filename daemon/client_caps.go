package daemon

import (
	"encoding/json"
	"sync/atomic"
)

// clientCaps is what one client connection advertised in its
// initialize's clientCapabilities.session that ACP's Go SDK (v0.13.5)
// does not read: the compaction updates and notices of schema 1.34. Part
// of its clientConn, set by initialize, read as updates go out: a
// session's attached clients each get what they advertised.
type clientCaps struct {
	compaction atomic.Bool // session.compaction: compaction_update, compaction_summary_chunk
	notices    atomic.Bool // session.notices: notice
}

// read sets c from initialize's params. A capability is advertised by an
// object (ACP: {}); omitted, null or anything else is not.
func (c *clientCaps) read(params json.RawMessage) {
	var req struct {
		ClientCapabilities struct {
			Session json.RawMessage `json:"session"`
		} `json:"clientCapabilities"`
	}
	var session struct {
		Compaction json.RawMessage `json:"compaction"`
		Notices    json.RawMessage `json:"notices"`
	}
	if json.Unmarshal(params, &req) == nil {
		json.Unmarshal(req.ClientCapabilities.Session, &session) // not an object: nothing advertised
	}
	c.compaction.Store(isObject(session.Compaction))
	c.notices.Store(isObject(session.Notices))
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &m) == nil
}

package daemon

import (
	"encoding/json"

	"github.com/coder/acp-go-sdk"
)

// ACP 1.34 names the tool a call runs (ToolCall's name: the programmatic
// name, beside the title the user reads). The Go SDK (v0.13.5) has no
// field for it: namedToolCall adds it to the SDK's encoding.

// webSearchName is the name a web search's tool call carries: the hosted
// tool's.
const webSearchName = "web_search"

// namedToolCall is the session/update notification of u, a tool_call,
// carrying the tool's name; its keys are in the SDK's (sorted) order.
func namedToolCall(sessionID string, u acp.SessionUpdate, name string) (json.RawMessage, bool) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return nil, false
	}
	if name != "" {
		fields["name"], _ = json.Marshal(name)
	}
	b, err = json.Marshal(wireNotification[map[string]json.RawMessage]{SessionID: sessionID, Update: fields})
	return b, err == nil
}

// broadcastToolCall sends u, a tool_call, with the tool's name to every
// attached client.
func (s *openSession) broadcastToolCall(u acp.SessionUpdate, name string) {
	b, ok := namedToolCall(s.id, u, name)
	if !ok {
		return
	}
	s.broadcastEach(func(*clientConn) []json.RawMessage { return []json.RawMessage{b} })
}

package daemon

import (
	"encoding/json"
	"fmt"

	"github.com/coder/acp-go-sdk"
)

// The session capabilities of ACP's unstable schema the Go SDK has no
// field for: session/fork (with hearth's fork from a turn) and
// session/status, added to initialize's answer as raw JSON.

// unstableSessionCaps are the entries added to
// agentCapabilities.sessionCapabilities.
var unstableSessionCaps = map[string]any{
	"fork":   map[string]any{"_meta": map[string]any{"hearth/fromTurn": true}},
	"status": map[string]any{},
}

// withUnstableCaps is r on the wire, its sessionCapabilities with
// unstableSessionCaps.
func withUnstableCaps(r acp.InitializeResponse) (json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode initialize: %w", err)
	}
	var top map[string]json.RawMessage
	var agent map[string]json.RawMessage
	var caps map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("encode initialize: %w", err)
	}
	if err := json.Unmarshal(top["agentCapabilities"], &agent); err != nil {
		return nil, fmt.Errorf("encode initialize: %w", err)
	}
	if raw, ok := agent["sessionCapabilities"]; ok {
		if err := json.Unmarshal(raw, &caps); err != nil {
			return nil, fmt.Errorf("encode initialize: %w", err)
		}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	for k, v := range unstableSessionCaps {
		caps[k] = v
	}
	if agent["sessionCapabilities"], err = json.Marshal(caps); err != nil {
		return nil, fmt.Errorf("encode initialize: %w", err)
	}
	if top["agentCapabilities"], err = json.Marshal(agent); err != nil {
		return nil, fmt.Errorf("encode initialize: %w", err)
	}
	return json.Marshal(top)
}

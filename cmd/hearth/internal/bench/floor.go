package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// floorMethod says, in the report, how floorOf is computed.
const floorMethod = "the server's own time for the minimal requests under the cost model: for each of the turn's " +
	"responses, per_request + per_input_kb × (the minimal input's bytes / 1024) + the output's pacing " +
	"(first_token + one 1/tokens_per_second gap between consecutive deltas, as the simulator recorded it); " +
	"the minimal input is the user's message for the first request and one function_call_output (the tool's output) " +
	"for each next one, every request chained to the previous response; no handshake (the connection is open), " +
	"nothing of the client's own time"

// floorOf is the floor of a turn whose generating requests are recs:
// each response's server time as if its request carried only the minimal
// input (minimal[i], the size of its input field). The output's pacing is the
// simulator's own record: it depends on the model's output, which is the
// same in every mode.
func floorOf(cost sim.Cost, recs []sim.Received, minimal []int) (time.Duration, error) {
	if len(recs) != len(minimal) {
		return 0, fmt.Errorf("the turn made %d model requests, want %d (one per tool call and the answer): a retry?", len(recs), len(minimal))
	}
	var floor time.Duration
	for i, r := range recs {
		floor += cost.ProcessDelay(minimal[i]) + r.OutputDelay
	}
	return floor, nil
}

// minimalInputs is the size of the input field of each minimal request of a
// steps-call turn: [user message], then [function_call_output] per call.
// The call ids have the simulator's length (call_ + 24 hex digits).
func minimalInputs(prompt, toolOutput string, steps int) []int {
	user, _ := json.Marshal([]any{map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": prompt}}}})
	out, _ := json.Marshal([]any{struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{"function_call_output", "call_" + strings.Repeat("0", 24), toolOutput}})
	sizes := []int{len(user)}
	for i := 0; i < steps; i++ {
		sizes = append(sizes, len(out))
	}
	return sizes
}

package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Settings are the non-input fields of a request. They must be
// byte-identical between two requests for the second to be incremental, and
// they are sent in full on every request (instructions are not inherited
// through previous_response_id).
type Settings struct {
	Model             string          `json:"model"`
	Instructions      string          `json:"instructions,omitempty"`
	Tools             json.RawMessage `json:"tools,omitempty"`
	ToolChoice        string          `json:"tool_choice,omitempty"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	Reasoning         *Reasoning      `json:"reasoning,omitempty"`
	Text              *Text           `json:"text,omitempty"`
	Store             bool            `json:"store"`
	// Include asks for reasoning.encrypted_content: under store:false it is
	// the only way the model's thinking survives a replay.
	Include []string `json:"include,omitempty"`
	// PromptCacheKey (the session id) routes a session's requests to the
	// same prompt cache, so full requests hit it too.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
}

// Reasoning is the request's reasoning object: effort, and summary when the
// user wants to see the model's thoughts.
type Reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary,omitempty"`
}

// Text is the request's text object: how long the model's answers run
// (verbosity: low, medium or high).
type Text struct {
	Verbosity string `json:"verbosity"`
}

// Key is the canonical bytes the incremental rule compares. The caller
// has checked Tools is JSON: only a json.RawMessage can fail to encode.
func (s Settings) Key() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("responses: settings do not encode: %v", err))
	}
	return b
}

// Create is one response.create frame, flat as the WebSocket mode wants
// it. Field order is fixed so identical requests are identical bytes.
type Create struct {
	Type string `json:"type"`
	Settings
	StreamID           string            `json:"stream_id,omitempty"`
	Generate           *bool             `json:"generate,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Input              []json.RawMessage `json:"input"`

	// Encoded is Settings.Key(), when the caller has it: Frame splices it
	// rather than encoding the settings (tools and instructions,
	// kilobytes) again.
	Encoded []byte `json:"-"`
}

// frameTail is the part of a response.create frame after its settings.
type frameTail struct {
	StreamID           string            `json:"stream_id,omitempty"`
	Generate           *bool             `json:"generate,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Input              []json.RawMessage `json:"input"`
}

// Frame encodes the response.create frame: the bytes encoding/json gives
// ev, built from the settings' encoding and the input items spliced in as
// they are, not re-encoded. The items are compact JSON the caller
// validated or the API sent, and encoding/json would scan every byte of a
// long transcript twice more (400 ms for a 26 MB re-warm); the settings are
// encoded once per change, not per request (Encoded).
func (ev Create) Frame() ([]byte, error) {
	set := ev.Encoded
	if set == nil {
		set = ev.Settings.Key()
	}
	typ, err := json.Marshal(ev.Type)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	tail, err := json.Marshal(frameTail{StreamID: ev.StreamID, Generate: ev.Generate, PreviousResponseID: ev.PreviousResponseID, Input: []json.RawMessage{}})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	items := ev.Input
	n := len(`{"type":,`) + len(typ) + len(set) + len(tail) + len(items)
	for _, it := range items {
		if len(it) == 0 {
			return nil, fmt.Errorf("encode request: empty input item")
		}
		n += len(it)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"type":`...)
	b = append(b, typ...)
	b = append(b, ',')
	b = append(b, set[1:len(set)-1]...) // settings always encode model and store: never empty
	b = append(b, ',')
	b = append(b, tail[1:len(tail)-len(`]}`)]...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']', '}'), nil
}

// Event is the part of a server event the client acts on. Unknown types and
// fields are ignored, as the protocol requires. A plain value, parsed once
// by the connection's reader.
type Event struct {
	Type     string `json:"type"`
	StreamID string `json:"stream_id,omitempty"`
	Seq      *int64 `json:"sequence_number,omitempty"`

	Response *responseBody   `json:"response,omitempty"`
	Steer    *SteerRef       `json:"steer,omitempty"` // response.steer.* events
	Item     json.RawMessage `json:"item,omitempty"`
	Delta    string          `json:"delta,omitempty"`

	SummaryIndex int `json:"summary_index,omitempty"`

	// error events: nested on WebSocket, flat on SSE.
	Status  int        `json:"status,omitempty"`
	Error   *errorBody `json:"error,omitempty"`
	Code    string     `json:"code,omitempty"`
	Message string     `json:"message,omitempty"`
	Param   string     `json:"param,omitempty"`

	// continued: a terminal event followed by an automatic successor on its
	// stream (Continued); set by the stream as it queues the event.
	continued bool
	// resetAt: an HTTP 429's headers say when to go again (APIError.ResetAt).
	resetAt time.Time

	// over: the event would have kept more than Config.MaxMessage; it
	// holds its type and lane, and this, the frame's size.
	over int64
}

// responseBody is an event's response object.
type responseBody struct {
	ID                string            `json:"id"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Error             *errorBody        `json:"error,omitempty"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details,omitempty"`
	Usage *usageBody `json:"usage,omitempty"`
}

// usageBody is a response's usage object.
type usageBody struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *usageBody) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{Input: u.InputTokens, Cached: u.InputTokensDetails.CachedTokens,
		Output: u.OutputTokens, Reasoning: u.OutputTokensDetails.ReasoningTokens}
}

type errorBody struct {
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Param   string `json:"param,omitempty"`
}

// apiError returns the error an "error" event carries, whichever shape it has.
func (e *Event) apiError() *APIError {
	ae := &APIError{Status: e.Status, Code: e.Code, Message: e.Message, Param: e.Param, ResetAt: e.resetAt}
	if e.Error != nil {
		ae.Type, ae.Code, ae.Message, ae.Param = e.Error.Type, e.Error.Code, e.Error.Message, e.Error.Param
	}
	return ae
}

// parseEvent parses one server event held whole (an SSE data block).
func parseEvent(frame []byte, limit int64) (*Event, error) {
	return newEventReader(limit).read(bytes.NewReader(frame))
}

package session

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// settings are the non-input fields of a request. They must be
// byte-identical between two requests for the second to be incremental, and
// they are sent in full on every request (instructions are not inherited
// through previous_response_id).
type settings struct {
	Model             string          `json:"model"`
	Instructions      string          `json:"instructions,omitempty"`
	Tools             json.RawMessage `json:"tools,omitempty"`
	ToolChoice        string          `json:"tool_choice,omitempty"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	Reasoning         *reasoning      `json:"reasoning,omitempty"`
	Store             bool            `json:"store"`
	// Include asks for reasoning.encrypted_content: under store:false it is
	// the only way the model's thinking survives a replay.
	Include []string `json:"include,omitempty"`
	// PromptCacheKey (the session id) routes a session's requests to the
	// same prompt cache, so full requests hit it too.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
}

// reasoning is the request's reasoning object: effort, and summary when the
// user wants to see the model's thoughts.
type reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary,omitempty"`
}

// key is the canonical bytes the incremental rule compares.
func (s settings) key() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		// Only RawMessage can fail, and tools are built by hearth from valid JSON.
		panic(fmt.Sprintf("session: settings do not encode: %v", err))
	}
	return b
}

// createEvent is one response.create frame, flat as the WebSocket mode wants
// it. Field order is fixed so identical requests are identical bytes.
type createEvent struct {
	Type string `json:"type"`
	settings
	StreamID           string            `json:"stream_id,omitempty"`
	Generate           *bool             `json:"generate,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Input              []json.RawMessage `json:"input"`

	// encoded is settings.key(), when the caller has it: marshalFrame
	// splices it rather than encoding the settings (tools and
	// instructions, kilobytes) again.
	encoded []byte
}

// frameTail is the part of a response.create frame after its settings.
type frameTail struct {
	StreamID           string            `json:"stream_id,omitempty"`
	Generate           *bool             `json:"generate,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Input              []json.RawMessage `json:"input"`
}

// marshalFrame encodes a response.create frame: the bytes encoding/json
// gives ev, built from the settings' encoding and the input items spliced
// in as they are, not re-encoded. The items are compact JSON the store
// validated or the API sent, and encoding/json would scan every byte of a
// long transcript twice more (400 ms for a 26 MB re-warm); the settings
// are encoded once per change, not per request (Conversation.settings).
func marshalFrame(ev createEvent) ([]byte, error) {
	set := ev.encoded
	if set == nil {
		set = ev.settings.key()
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

// event is the part of a server event the client acts on. Unknown types and
// fields are ignored, as the protocol requires.
type event struct {
	Type     string `json:"type"`
	StreamID string `json:"stream_id,omitempty"`
	Seq      *int64 `json:"sequence_number,omitempty"`

	Response *responseBody   `json:"response,omitempty"`
	Item     json.RawMessage `json:"item,omitempty"`
	Delta    string          `json:"delta,omitempty"`

	SummaryIndex int `json:"summary_index,omitempty"`

	// error events: nested on WebSocket, flat on SSE.
	Status  int        `json:"status,omitempty"`
	Error   *errorBody `json:"error,omitempty"`
	Code    string     `json:"code,omitempty"`
	Message string     `json:"message,omitempty"`
	Param   string     `json:"param,omitempty"`

	raw []byte // the frame as received
}

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

func (u *usageBody) usage() store.Usage {
	if u == nil {
		return store.Usage{}
	}
	return store.Usage{Input: u.InputTokens, Cached: u.InputTokensDetails.CachedTokens,
		Output: u.OutputTokens, Reasoning: u.OutputTokensDetails.ReasoningTokens}
}

type errorBody struct {
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Param   string `json:"param,omitempty"`
}

// apiError returns the error an "error" event carries, whichever shape it has.
func (e *event) apiError() *APIError {
	ae := &APIError{Status: e.Status, Code: e.Code, Message: e.Message, Param: e.Param}
	if e.Error != nil {
		ae.Type, ae.Code, ae.Message, ae.Param = e.Error.Type, e.Error.Code, e.Error.Message, e.Error.Param
	}
	return ae
}

func parseEvent(frame []byte) (*event, error) {
	var e event
	if err := json.Unmarshal(frame, &e); err != nil {
		return nil, fmt.Errorf("server frame is not JSON: %w", err)
	}
	if e.Type == "" {
		return nil, fmt.Errorf("server frame has no type")
	}
	e.raw = frame
	return &e, nil
}

// itemHeader reads the fields of an output item the agent loop needs.
type itemHeader struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Role      string `json:"role"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func readItem(raw json.RawMessage) itemHeader {
	var h itemHeader
	_ = json.Unmarshal(raw, &h) // unknown shapes read as an empty header
	return h
}

// UserMessage is the input item of a user's prompt: its text, then its
// images (input_image parts), if any.
func UserMessage(text string, images ...Image) json.RawMessage {
	if len(images) == 0 {
		return inputMessage("user", text)
	}
	b, _ := json.Marshal(struct {
		Type    string        `json:"type"`
		Role    string        `json:"role"`
		Content []contentPart `json:"content"`
	}{"message", "user", contentParts(text, images)})
	return b
}

// contentParts is text (when not empty) as an input_text part, then the
// images as input_image parts.
func contentParts(text string, images []Image) []contentPart {
	parts := make([]contentPart, 0, 1+len(images))
	if text != "" {
		parts = append(parts, contentPart{Type: "input_text", Text: text})
	}
	for _, im := range images {
		parts = append(parts, im.part())
	}
	return parts
}

func inputMessage(role, text string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}{Type: "message", Role: role, Content: []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{{Type: "input_text", Text: text}}})
	return b
}

// functionCallOutput is the input item that answers a function call: its
// output is the text, or, when the tool returned images, a list of an
// input_text part and the input_image parts (the Responses API takes
// either form).
func functionCallOutput(callID, output string, images ...Image) json.RawMessage {
	if len(images) == 0 {
		b, _ := json.Marshal(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}{"function_call_output", callID, output})
		return b
	}
	b, _ := json.Marshal(struct {
		Type   string        `json:"type"`
		CallID string        `json:"call_id"`
		Output []contentPart `json:"output"`
	}{"function_call_output", callID, contentParts(output, images)})
	return b
}

func itemsEqual(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

// DeveloperMessage is an input item of context hearth adds (AGENTS.md):
// it goes in the input, not the instructions, so editing it does not break
// incremental requests of other sessions.
func DeveloperMessage(text string) json.RawMessage {
	return inputMessage("developer", text)
}

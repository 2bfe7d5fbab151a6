package session

import (
	"bytes"
	"encoding/json"
)

// itemHeader reads the fields of an output item the agent loop needs; not
// a message's text, which can be megabytes (outputText reads it).
type itemHeader struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"` // a custom_tool_call's freeform input
	Role      string `json:"role"`
}

// messageParts reads a message item's content parts (their text can be
// megabytes, so itemHeader leaves them out).
func messageParts(raw json.RawMessage) []contentPart {
	var m struct {
		Content []contentPart `json:"content"`
	}
	_ = json.Unmarshal(raw, &m) // unknown shapes read as no parts
	return m.Content
}

func readItem(raw json.RawMessage) itemHeader {
	var h itemHeader
	_ = json.Unmarshal(raw, &h) // unknown shapes read as an empty header
	return h
}

// call is the tool call an output item makes, and false for an item that
// makes none: a function_call, or a custom_tool_call (a custom tool's
// freeform input, docs/ARCHITECTURE.md "The flow of one turn"), which
// reaches Tools.Run as the arguments of the same tool's function form,
// {"input": text}, and is answered with a custom_tool_call_output.
func (h itemHeader) call() (ToolCall, bool) {
	switch h.Type {
	case "function_call":
		return ToolCall{CallID: h.CallID, Name: h.Name, Arguments: h.Arguments}, true
	case "custom_tool_call":
		args, _ := json.Marshal(struct {
			Input string `json:"input"`
		}{h.Input}) // a string always encodes
		return ToolCall{CallID: h.CallID, Name: h.Name, Arguments: string(args), Custom: true}, true
	}
	return ToolCall{}, false
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

// callOutput is the input item that answers call: a function_call_output,
// or a custom_tool_call_output for a custom tool's call (same fields). Its
// output is the text, or, when the tool returned images, a list of an
// input_text part and the input_image parts (the Responses API takes
// either form, for both).
func callOutput(call ToolCall, output string, images ...Image) json.RawMessage {
	if call.Custom {
		return outputItem("custom_tool_call_output", call.CallID, output, images)
	}
	return outputItem("function_call_output", call.CallID, output, images)
}

func outputItem(typ, callID, output string, images []Image) json.RawMessage {
	if len(images) == 0 {
		b, _ := json.Marshal(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}{typ, callID, output})
		return b
	}
	b, _ := json.Marshal(struct {
		Type   string        `json:"type"`
		CallID string        `json:"call_id"`
		Output []contentPart `json:"output"`
	}{typ, callID, contentParts(output, images)})
	return b
}

func itemsEqual(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

// DeveloperMessage is an input item of context hearth adds (the guidance,
// the permissions): it goes in the input, not the instructions, so the
// chain carries it and editing it does not break incremental requests of
// other sessions.
func DeveloperMessage(text string) json.RawMessage {
	return inputMessage("developer", text)
}

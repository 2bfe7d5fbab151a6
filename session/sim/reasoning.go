package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ReasoningMode says which models reason (docs/ARCHITECTURE.md, "The Responses protocol": store:false and ids).
type ReasoningMode int

const (
	ReasoningAuto   ReasoningMode = iota // reasoning unless the model name starts with gpt-4, gpt-3.5 or chatgpt-4 (default)
	ReasoningAlways                      // every model reasons
	ReasoningNever                       // no model reasons: no reasoning items, a reasoning effort is refused
)

var reasoningModeNames = [...]string{"auto", "always", "never"}

func (m ReasoningMode) String() string {
	if m >= 0 && int(m) < len(reasoningModeNames) {
		return reasoningModeNames[m]
	}
	return "reasoning(?)"
}

// ParseReasoningMode reads "auto", "always" or "never" (hearth sim --reasoning).
func ParseReasoningMode(s string) (ReasoningMode, error) {
	for i, n := range reasoningModeNames {
		if n == s {
			return ReasoningMode(i), nil
		}
	}
	return 0, fmt.Errorf("sim: unknown reasoning mode %q (want auto, always or never)", s)
}

// reasons reports whether model is a reasoning model under the server's mode.
func (o Options) reasons(model string) bool {
	switch o.Reasoning {
	case ReasoningAlways:
		return true
	case ReasoningNever:
		return false
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "chatgpt-4"} {
		if strings.HasPrefix(model, p) {
			return false
		}
	}
	return true
}

// The values the real API accepts in the reasoning object.
var (
	reasoningEfforts   = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
	reasoningSummaries = []string{"auto", "concise", "detailed"}
)

// reasoningParams is a request's reasoning object; the zero value means absent.
type reasoningParams struct {
	effort  string // "" when absent or null
	summary string // "" when absent or null: no summary is streamed
}

// parseReasoning validates the reasoning field: an object whose effort and summary, when
// present, are among the values the API knows.
func (r *request) parseReasoning() {
	v, ok := r.fields["reasoning"]
	if !ok || isNull(v) {
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil || obj == nil {
		r.fail(invalidRequest("invalid_type", "reasoning", "Invalid type for 'reasoning': expected an object."))
		return
	}
	r.reasoning.effort = r.enumMember(obj, "reasoning", "effort", reasoningEfforts)
	r.reasoning.summary = r.enumMember(obj, "reasoning", "summary", reasoningSummaries)
}

// textVerbosities are the values the API takes for text.verbosity.
var textVerbosities = []string{"low", "medium", "high"}

// parseText checks the text object's verbosity, as the API does: an
// object, its verbosity absent, null or one of textVerbosities.
func (r *request) parseText() {
	v, ok := r.fields["text"]
	if !ok || isNull(v) {
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil || obj == nil {
		r.fail(invalidRequest("invalid_type", "text", "Invalid type for 'text': expected an object."))
		return
	}
	r.enumMember(obj, "text", "verbosity", textVerbosities)
}

// enumMember reads <object>.<name>: absent or null is "", anything outside allowed fails.
func (r *request) enumMember(obj map[string]json.RawMessage, object, name string, allowed []string) string {
	v, ok := obj[name]
	if !ok || isNull(v) {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	} else if contains(allowed, s) {
		return s
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = "'" + a + "'"
	}
	r.fail(invalidRequest("invalid_value", object+"."+name, "Invalid value: '%s'. Supported values are: %s, and %s.",
		s, strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1]))
	return ""
}

// reasoningSummary is the scripted model's thought about a turn: what it is about to do.
func reasoningSummary(p plan, userText string) string {
	if p.callName != "" {
		return "Deciding to call " + p.callName + "."
	}
	text := strings.Join(strings.Fields(userText), " ")
	if r := []rune(text); len(r) > 60 {
		text = string(r[:60])
	}
	if text == "" {
		return "Thinking about the conversation."
	}
	return "Thinking about: " + text
}

// reasoningOverhead is the reasoning tokens a response spends beyond its summary's words.
const reasoningOverhead = 8

// streamReasoning writes the reasoning item that opens a reasoning model's response: added
// with an empty summary, the summary part when the request asked for one, then done. The item
// carries encrypted_content when the request included reasoning.encrypted_content.
func (r *reply) streamReasoning(ctx context.Context, index int, summary string) (json.RawMessage, error) {
	id := newID("rs")
	deltas := splitWords(summary)
	r.reasoningTokens = len(deltas) + reasoningOverhead
	added := map[string]any{"type": "reasoning", "id": id, "summary": []any{}}
	if err := r.emit(ctx, "response.output_item.added", map[string]any{"output_index": index, "item": added}, false); err != nil {
		return nil, err
	}
	item := map[string]any{"type": "reasoning", "id": id, "summary": []any{}}
	if r.summary != "" {
		part := func(t string) map[string]any { return map[string]any{"type": "summary_text", "text": t} }
		at := func(ev map[string]any) map[string]any {
			ev["item_id"], ev["output_index"], ev["summary_index"] = id, index, 0
			return ev
		}
		if err := r.emit(ctx, "response.reasoning_summary_part.added", at(map[string]any{"part": part("")}), false); err != nil {
			return nil, err
		}
		for k, d := range deltas {
			if k > 0 {
				if err := r.pause(ctx, r.cost.tokenGap()); err != nil {
					return nil, err
				}
			}
			if err := r.emit(ctx, "response.reasoning_summary_text.delta", at(map[string]any{"delta": d}), false); err != nil {
				return nil, err
			}
		}
		if err := r.emit(ctx, "response.reasoning_summary_text.done", at(map[string]any{"text": summary}), false); err != nil {
			return nil, err
		}
		if err := r.emit(ctx, "response.reasoning_summary_part.done", at(map[string]any{"part": part(summary)}), false); err != nil {
			return nil, err
		}
		item["summary"] = []any{part(summary)}
	}
	if r.encrypted {
		item["encrypted_content"] = seal(r.secret, sealedReasoning{ID: id, Summary: summary, Model: r.model})
	}
	if err := r.emit(ctx, "response.output_item.done", map[string]any{"output_index": index, "item": item}, false); err != nil {
		return nil, err
	}
	return json.Marshal(item)
}

package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
)

// request is one parsed response.create: a WebSocket frame or an HTTP body. Validation
// problems do not fail the parse; they are kept so that the answer goes out in order on the
// request's lane.
type request struct {
	raw    []byte
	fields map[string]json.RawMessage

	typ          string // "" when absent or not a string
	model        string
	instructions string
	tools        json.RawMessage
	input        []json.RawMessage // new items; a string input becomes one user message
	inputBytes   int               // size of the `input` field as sent
	prevID       string
	generate     *bool
	stream       bool // HTTP: stream:true
	store        *bool
	include      []string
	reasoning    reasoningParams
	cacheKey     string // prompt_cache_key

	streamID    string    // the stream_id when it is a JSON string (valid or not)
	hasStreamID bool      // stream_id present and not null
	streamIDErr *apiError // stream_id present but not a valid lane name

	invalid *apiError // first other validation problem
}

var laneName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

var errNotObject = errors.New("frame is not a JSON object")

// parseRequest parses raw; it fails only when raw is not a JSON object.
func parseRequest(raw []byte) (*request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, errors.Join(errNotObject, err)
	}
	if fields == nil {
		return nil, errNotObject
	}
	r := &request{raw: raw, fields: fields}
	r.typ, _ = r.str("type")
	r.model, _ = r.str("model")
	r.prevID, _ = r.str("previous_response_id")
	if v, ok := fields["instructions"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.instructions); err != nil {
			r.instructions = string(v) // not a string: kept for the record, the model ignores it
		}
	}
	if v, ok := fields["tools"]; ok && !isNull(v) {
		if !bytes.HasPrefix(bytes.TrimSpace(v), []byte("[")) {
			r.fail(invalidRequest("invalid_type", "tools", "Invalid type for 'tools': expected an array."))
		}
		r.tools = v
		r.checkTools()
	}
	r.parseInput()
	if v, ok := fields["generate"]; ok && !isNull(v) {
		var g bool
		if err := json.Unmarshal(v, &g); err != nil {
			r.fail(invalidRequest("invalid_type", "generate", "Invalid type for 'generate': expected a boolean."))
		} else {
			r.generate = &g
		}
	}
	if v, ok := fields["stream"]; ok && !isNull(v) {
		_ = json.Unmarshal(v, &r.stream)
	}
	if v, ok := fields["store"]; ok && !isNull(v) {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			r.fail(invalidRequest("invalid_type", "store", "Invalid type for 'store': expected a boolean."))
		} else {
			r.store = &b
		}
	}
	if v, ok := fields["include"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.include); err != nil {
			r.fail(invalidRequest("invalid_type", "include", "Invalid type for 'include': expected an array of strings."))
		}
	}
	r.cacheKey, _ = r.str("prompt_cache_key")
	r.parseReasoning()
	r.parseText()
	if v, ok := fields["stream_id"]; ok && !isNull(v) {
		r.hasStreamID = true
		if err := json.Unmarshal(v, &r.streamID); err != nil {
			e := invalidStreamID("Invalid type for 'stream_id': expected a string.")
			r.streamIDErr = &e
		} else if !laneName.MatchString(r.streamID) {
			e := invalidStreamID("Invalid 'stream_id': must be 1-256 characters of [A-Za-z0-9_.-].")
			r.streamIDErr = &e
		}
	}
	return r, nil
}

// parseInput reads `input`: a string (one user message) or an array of item objects.
func (r *request) parseInput() {
	v, ok := r.fields["input"]
	if !ok || isNull(v) {
		return
	}
	r.inputBytes = len(v)
	var s string
	if json.Unmarshal(v, &s) == nil {
		item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": s})
		r.input = []json.RawMessage{item}
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		r.fail(invalidRequest("invalid_type", "input", "Invalid type for 'input': expected a string or an array."))
		return
	}
	for _, it := range items {
		if !bytes.HasPrefix(bytes.TrimSpace(it), []byte("{")) {
			r.fail(invalidRequest("invalid_type", "input", "Invalid input item: expected an object."))
			return
		}
	}
	r.input = items
}

// str reads an optional string field; a field of another type is a validation problem.
func (r *request) str(name string) (string, bool) {
	v, ok := r.fields[name]
	if !ok || isNull(v) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		if name != "type" { // a bad type is a protocol error, handled by the caller
			r.fail(invalidRequest("invalid_type", name, "Invalid type for '%s': expected a string.", name))
		}
		return "", false
	}
	return s, true
}

func (r *request) has(name string) bool {
	v, ok := r.fields[name]
	return ok && !isNull(v)
}

func (r *request) fail(e apiError) {
	if r.invalid == nil {
		r.invalid = &e
	}
}

// storeOff reports store:false; absent means true, the real API's default.
func (r *request) storeOff() bool { return r.store != nil && !*r.store }

// includes reports whether the include array names what.
func (r *request) includes(what string) bool { return contains(r.include, what) }

// generates reports whether the request asks for model output (generate defaults to true).
func (r *request) generates() bool { return r.generate == nil || *r.generate }

// fill copies the request's fields into a Received record.
func (r *request) fill(rec Received) Received {
	rec.Type = r.typ
	rec.Generate = r.generate
	rec.PreviousResponseID = r.prevID
	rec.StreamID = r.streamID
	rec.Model = r.model
	rec.Instructions = r.instructions
	rec.Tools = r.tools
	rec.Input = r.input
	rec.InputBytes = r.inputBytes
	rec.Store = r.store
	rec.Include = r.include
	if v, ok := r.fields["reasoning"]; ok && !isNull(v) {
		rec.Reasoning = v
	}
	rec.PromptCacheKey = r.cacheKey
	return rec
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

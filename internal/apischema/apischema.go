// Package apischema holds the official Responses API request schema, for
// tests that check what hearth (or its simulator) sends against it rather
// than against hearth's own idea of the API.
//
// openai-responses.json is the part of the OpenAI API's OpenAPI description
// (github.com/openai/openai-openapi, openapi.json, info.version 2.3.0)
// reachable from ResponsesClientEventResponseCreate (a response.create over
// the WebSocket) and CreateResponse (POST /v1/responses), as one JSON Schema
// 2020-12 document under $defs. It is relaxed only where the real server is
// known to accept less than the spec requires: an output message replayed as
// input without id and status, an output_text without annotations/logprobs,
// a reasoning item without id, an input_image without detail. generate is
// not in the spec; the schema allows extra top-level fields.
//
// Imports: none of hearth's; only tests import it.
package apischema

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed openai-responses.json
var responses []byte

// Responses returns the schema of one of the document's $defs, resolved:
// "CreateResponse" for an HTTP request body, "ResponsesClientEventResponseCreate"
// for a WebSocket response.create.
func Responses(def string) (*jsonschema.Resolved, error) {
	var doc map[string]any
	if err := json.Unmarshal(responses, &doc); err != nil {
		return nil, fmt.Errorf("apischema: %w", err)
	}
	defs, _ := doc["$defs"].(map[string]any)
	if _, ok := defs[def]; !ok {
		return nil, fmt.Errorf("apischema: no $defs/%s in the Responses schema", def)
	}
	doc["$ref"] = "#/$defs/" + def
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("apischema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("apischema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("apischema: resolve %s: %w", def, err)
	}
	return rs, nil
}

// Validate checks one JSON document against a resolved schema.
func Validate(rs *jsonschema.Resolved, doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("apischema: not JSON: %w", err)
	}
	return rs.Validate(v)
}

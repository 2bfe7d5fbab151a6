package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// validator is implemented by the ACP payload types (acp-go-sdk generates a
// Validate method that checks required fields).
type validator interface {
	Validate() error
}

// DecodeParams decodes a request's params into v with encoding/json v1 (the
// ACP types carry v1 MarshalJSON/UnmarshalJSON methods; jsonrpc2's json/v2
// codec must not be used for them), then calls v.Validate() when v has it.
//
// Every failure is a *ParamsError (-32602 on the wire) naming the field:
// absent or null params ("params"), a type mismatch (the JSON path of the
// field, e.g. "cwd"), malformed JSON, or a Validate failure (the field its
// message starts with, e.g. "cwd is required" names "cwd"). Use it only for
// methods whose params are required.
func DecodeParams(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return InvalidParams("params", "missing: this method requires params")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return decodeFailure(err)
	}
	if val, ok := v.(validator); ok {
		if err := val.Validate(); err != nil {
			return InvalidParams(leadingField(err.Error()), "%w", err)
		}
	}
	return nil
}

// decodeFailure turns an encoding/json error into a *ParamsError.
func decodeFailure(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "params"
		}
		return InvalidParams(field, "expected %s, got JSON %s", typeName(typeErr), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return InvalidParams("params", "malformed JSON at offset %d: %w", syntaxErr.Offset, err)
	default:
		// A custom UnmarshalJSON failed; its message is the best description.
		return InvalidParams("params", "%w", err)
	}
}

// typeName is the Go type a JSON value should have had, in JSON terms where
// that is clearer.
func typeName(e *json.UnmarshalTypeError) string {
	if e.Type == nil {
		return "another type"
	}
	switch e.Type.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return e.Type.String()
	}
}

// leadingField returns the first word of msg when it looks like a JSON field
// name ("cwd is required" → "cwd"), else "params".
func leadingField(msg string) string {
	word, _, _ := strings.Cut(msg, " ")
	if word == "" {
		return "params"
	}
	for _, c := range word {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.':
		default:
			return "params"
		}
	}
	return word
}

// Result encodes a handler's result with encoding/json v1, without HTML
// escaping, as compact JSON. Handlers return the json.RawMessage so jsonrpc2
// passes it through verbatim.
func Result(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("rpc: encode %T: %w", v, err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

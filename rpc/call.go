package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// Call calls method on the peer of conn with encoding/json v1 on both sides:
// params are encoded with Result (nil sends none) and the reply is decoded
// into result (nil discards it). Use it, not conn.Call, for ACP payloads:
// conn.Call would use jsonrpc2's json/v2 codec.
//
// An error response from the peer is returned as the *jsonrpc2.Error itself,
// unwrapped, so callers can check its Code. Other failures (ctx done, the
// connection closing, a decode error) are wrapped with the method name.
func Call(ctx context.Context, conn jsonrpc2.Conn, method string, params, result any) error {
	raw, err := encodeParams(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var reply json.RawMessage
	if raw == nil {
		_, err = conn.Call(ctx, method, nil, &reply)
	} else {
		_, err = conn.Call(ctx, method, raw, &reply)
	}
	if err != nil {
		var wire *jsonrpc2.Error
		if errors.As(err, &wire) {
			return wire
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	if result == nil || len(reply) == 0 {
		return nil
	}
	if err := json.Unmarshal(reply, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// Notify sends a notification of method to the peer of conn, encoding params
// with encoding/json v1 (nil sends none).
func Notify(ctx context.Context, conn jsonrpc2.Conn, method string, params any) error {
	raw, err := encodeParams(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if raw == nil {
		err = conn.Notify(ctx, method, nil)
	} else {
		err = conn.Notify(ctx, method, raw)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// encodeParams encodes params with encoding/json v1; nil (or JSON null) means
// no params.
func encodeParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(p) == 0 || string(p) == "null" {
			return nil, nil
		}
		return p, nil
	}
	raw, err := Result(params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}

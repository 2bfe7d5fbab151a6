package rpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// JSON-RPC error codes hearth answers with beyond the standard ones in
// jsonrpc2 (ParseError, InvalidRequest, MethodNotFound, InvalidParams,
// InternalError). The values are ACP's.
const (
	// CodeAuthRequired: authentication is required before this operation.
	CodeAuthRequired jsonrpc2.Code = -32000
	// CodeResourceNotFound: a named resource (a session, a file) does not
	// exist. Note that LSP uses the same value for "server not initialized".
	CodeResourceNotFound jsonrpc2.Code = -32002
	// CodeRequestCancelled: the request was cancelled before it completed.
	CodeRequestCancelled jsonrpc2.Code = -32800
	// CodeModelAPI (hearth's, in the range JSON-RPC leaves to servers): the
	// model API refused or failed the turn's request after the retries
	// that were safe — no quota, a context window exceeded, an unknown
	// model, a connection that could not be kept. The message says what
	// the API said and what to do.
	CodeModelAPI jsonrpc2.Code = -32010
	// CodeShuttingDown (hearth's): the daemon is stopping and did not start
	// the request; send it again once a daemon answers (hearth acp starts
	// one).
	CodeShuttingDown jsonrpc2.Code = -32011
	// CodeStore (hearth's): the database failed — damaged, an I/O error, the
	// disk full, read-only. The message names the file and what to do.
	CodeStore jsonrpc2.Code = -32012
)

// Application errors the daemon returns from handlers. Wrap them with %w to
// add context; WireError finds them anywhere in the chain. They are values
// that live for the process.
var (
	// ErrNotInitialized: a session method arrived before initialize (-32600).
	ErrNotInitialized = errors.New("not initialized: call initialize first")
	// ErrUnknownSession: the named session does not exist (-32002). Use
	// UnknownSession to name the id.
	ErrUnknownSession = errors.New("unknown session")
	// ErrInvalidParams: the params are missing or malformed (-32602). Use
	// InvalidParams to name the field.
	ErrInvalidParams = errors.New("invalid params")
	// ErrCancelled: the request was cancelled (-32800). context.Canceled maps
	// to the same code.
	ErrCancelled = errors.New("request cancelled")
	// ErrAuthRequired: authentication is required (-32000).
	ErrAuthRequired = errors.New("authentication required")
	// ErrModelAPI: the model API refused or failed a request (-32010).
	ErrModelAPI = errors.New("model API error")
	// ErrShuttingDown: the daemon is stopping and did not start the request
	// (-32011).
	ErrShuttingDown = errors.New("the daemon is shutting down: nothing was started; send it again once it is back")
	// ErrStore: the daemon's database failed (-32012).
	ErrStore = errors.New("store error")
	// ErrInternal: a bug or an unexpected failure (-32603). Any error WireError
	// does not recognise gets this code too.
	ErrInternal = errors.New("internal error")
)

// codeTable is the one mapping from application errors to JSON-RPC codes,
// checked in order with errors.Is.
var codeTable = []struct {
	err  error
	code jsonrpc2.Code
}{
	{ErrNotInitialized, jsonrpc2.InvalidRequest},
	{ErrUnknownSession, CodeResourceNotFound},
	{ErrInvalidParams, jsonrpc2.InvalidParams},
	{ErrCancelled, CodeRequestCancelled},
	{context.Canceled, CodeRequestCancelled},
	{ErrAuthRequired, CodeAuthRequired},
	{ErrModelAPI, CodeModelAPI},
	{ErrShuttingDown, CodeShuttingDown},
	{ErrStore, CodeStore},
	{ErrInternal, jsonrpc2.InternalError},
}

// UnknownSession returns an error wrapping ErrUnknownSession that names id.
func UnknownSession(id string) error {
	return fmt.Errorf("%w: %q", ErrUnknownSession, id)
}

// ParamsError is an invalid-params error naming the offending field. It
// matches ErrInvalidParams with errors.Is. Values are created per failed
// request and live as long as the error is held.
type ParamsError struct {
	// Field is the JSON field at fault, as a dotted path ("cwd",
	// "mcpServers.0.name"), or "params" for the params as a whole.
	Field string
	// Err is the reason.
	Err error
}

// Error reads "invalid params: FIELD: REASON".
func (e *ParamsError) Error() string {
	return fmt.Sprintf("invalid params: %s: %v", e.Field, e.Err)
}

// Unwrap returns the reason.
func (e *ParamsError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidParams.
func (e *ParamsError) Is(target error) bool { return target == ErrInvalidParams }

// InvalidParams returns a *ParamsError for field with a reason formatted like
// fmt.Errorf (so %w wraps).
func InvalidParams(field string, format string, args ...any) error {
	if field == "" {
		field = "params"
	}
	return &ParamsError{Field: field, Err: fmt.Errorf(format, args...)}
}

// WireError maps any error to the JSON-RPC error object sent on the wire. It
// is the one place application errors become codes:
//
//   - a *jsonrpc2.Error anywhere in the chain keeps its code (code 0 becomes
//     -32603) and takes the whole chain's text as its message;
//   - errors wrapping a value of codeTable get its code;
//   - anything else is -32603 "internal error: ...".
//
// The message is err.Error(), so wrapping context reaches the user. It returns
// nil for a nil error and never returns code 0.
func WireError(err error) *jsonrpc2.Error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) && wire != nil {
		if wire == err && wire.Code != 0 && wire.Message != "" {
			return wire
		}
		code := wire.Code
		if code == 0 {
			code = jsonrpc2.InternalError
		}
		if msg == "" {
			msg = defaultMessage(code)
		}
		return &jsonrpc2.Error{Code: code, Message: msg, Data: wire.Data}
	}
	for _, m := range codeTable {
		if errors.Is(err, m.err) {
			if msg == "" {
				msg = defaultMessage(m.code)
			}
			return &jsonrpc2.Error{Code: m.code, Message: msg}
		}
	}
	if msg == "" {
		msg = "unknown failure"
	}
	return &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: "internal error: " + msg}
}

// defaultMessage is the text for a code whose error carried none.
func defaultMessage(code jsonrpc2.Code) string {
	switch code {
	case jsonrpc2.ParseError:
		return "parse error"
	case jsonrpc2.InvalidRequest:
		return "invalid request"
	case jsonrpc2.MethodNotFound:
		return "method not found"
	case jsonrpc2.InvalidParams:
		return "invalid params"
	case CodeAuthRequired:
		return "authentication required"
	case CodeResourceNotFound:
		return "resource not found"
	case CodeRequestCancelled:
		return "request cancelled"
	case CodeStore:
		return "store error"
	default:
		return "internal error"
	}
}

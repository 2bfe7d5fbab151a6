package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"
)

func TestWireError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code jsonrpc2.Code
		msg  string
	}{
		{"not initialized", fmt.Errorf("session/new: %w", ErrNotInitialized), jsonrpc2.InvalidRequest, "session/new: not initialized: call initialize first"},
		{"unknown session", UnknownSession("abc"), CodeResourceNotFound, `unknown session: "abc"`},
		{"invalid params", fmt.Errorf("prompt: %w", InvalidParams("prompt", "must not be empty")), jsonrpc2.InvalidParams, "prompt: invalid params: prompt: must not be empty"},
		{"cancelled", ErrCancelled, CodeRequestCancelled, "request cancelled"},
		{"context cancelled", fmt.Errorf("turn: %w", context.Canceled), CodeRequestCancelled, "turn: context canceled"},
		{"auth", ErrAuthRequired, CodeAuthRequired, "authentication required"},
		{"store", fmt.Errorf("%w: commit: database disk image is malformed", ErrStore), CodeStore, "store error: commit: database disk image is malformed"},
		{"internal sentinel", fmt.Errorf("%w: store broke", ErrInternal), jsonrpc2.InternalError, "internal error: store broke"},
		{"plain error", errors.New("disk full"), jsonrpc2.InternalError, "internal error: disk full"},
		{"jsonrpc error kept", jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no such method"), jsonrpc2.MethodNotFound, "no such method"},
		{"wrapped jsonrpc error", fmt.Errorf("dispatch: %w", jsonrpc2.ErrMethodNotFound), jsonrpc2.MethodNotFound, "dispatch: JSON-RPC method not found"},
		{"code zero fixed", &jsonrpc2.Error{Message: "oops"}, jsonrpc2.InternalError, "oops"},
		{"empty message filled", &jsonrpc2.Error{Code: jsonrpc2.InvalidParams}, jsonrpc2.InvalidParams, "invalid params"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := WireError(tc.err)
			if got.Code != tc.code || got.Message != tc.msg {
				t.Fatalf("WireError = %d %q, want %d %q", got.Code, got.Message, tc.code, tc.msg)
			}
		})
	}
	if WireError(nil) != nil {
		t.Fatal("WireError(nil) != nil")
	}
}

func TestInvalidParamsIs(t *testing.T) {
	err := fmt.Errorf("x: %w", InvalidParams("cwd", "not absolute: %q", "rel"))
	if !errors.Is(err, ErrInvalidParams) {
		t.Fatal("not ErrInvalidParams")
	}
	var pe *ParamsError
	if !errors.As(err, &pe) || pe.Field != "cwd" {
		t.Fatalf("field: %+v", pe)
	}
}

func TestDecodeParams(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		field string
		msg   string
	}{
		{"absent", ``, "params", "missing"},
		{"null", `null`, "params", "missing"},
		{"wrong type top-level", `[1]`, "params", "object"},
		{"cwd number", `{"cwd":5,"mcpServers":[]}`, "cwd", "expected string, got JSON number"},
		{"nested field", `{"cwd":"/w","mcpServers":[],"additionalDirectories":[7]}`, "additionalDirectories", "string"},
		{"required by Validate", `{"mcpServers":[]}`, "cwd", "cwd is required"},
		{"mcpServers missing", `{"cwd":"/w"}`, "mcpServers", "mcpServers is required"},
		{"malformed", `{"cwd":`, "params", "malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req acp.NewSessionRequest
			err := DecodeParams(json.RawMessage(tc.raw), &req)
			var pe *ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParamsError", err)
			}
			if pe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("field %q, error %q; want field %q mentioning %q", pe.Field, err, tc.field, tc.msg)
			}
			if w := WireError(err); w.Code != jsonrpc2.InvalidParams || !strings.Contains(w.Message, tc.field) {
				t.Fatalf("wire %d %q", w.Code, w.Message)
			}
		})
	}

	var req acp.NewSessionRequest
	if err := DecodeParams(json.RawMessage(`{"cwd":"/w","mcpServers":[],"_meta":{"x":1}}`), &req); err != nil {
		t.Fatal(err)
	}
	if req.Cwd != "/w" {
		t.Fatalf("cwd %q", req.Cwd)
	}
}

func TestResultUsesJSONv1(t *testing.T) {
	raw, err := Result(acp.NewSessionResponse{SessionId: "s<1>"})
	if err != nil {
		t.Fatal(err)
	}
	// v1 honours omitempty (v2 would keep empty slices) and we do not escape HTML.
	if string(raw) != `{"sessionId":"s<1>"}` {
		t.Fatalf("got %s", raw)
	}
	if _, err := Result(func() {}); err == nil {
		t.Fatal("encoding a func succeeded")
	}
}

func TestMethodNamesMatchACP(t *testing.T) {
	pairs := map[string]string{
		MethodInitialize:               acp.AgentMethodInitialize,
		MethodAuthenticate:             acp.AgentMethodAuthenticate,
		MethodSessionNew:               acp.AgentMethodSessionNew,
		MethodSessionLoad:              acp.AgentMethodSessionLoad,
		MethodSessionList:              acp.AgentMethodSessionList,
		MethodSessionPrompt:            acp.AgentMethodSessionPrompt,
		MethodSessionCancel:            acp.AgentMethodSessionCancel,
		MethodSessionSetMode:           acp.AgentMethodSessionSetMode,
		MethodSessionUpdate:            acp.ClientMethodSessionUpdate,
		MethodSessionRequestPermission: acp.ClientMethodSessionRequestPermission,
		MethodSessionResume:            acp.AgentMethodSessionResume,
		MethodSessionClose:             acp.AgentMethodSessionClose,
		MethodSessionDelete:            acp.AgentMethodSessionDelete,
		MethodLogout:                   acp.AgentMethodLogout,
	}
	for ours, theirs := range pairs {
		if ours != theirs {
			t.Errorf("%q != ACP %q", ours, theirs)
		}
	}
	for _, m := range []string{MethodHearthStatus, MethodHearthInspect} {
		if !strings.HasPrefix(m, "_hearth/") {
			t.Errorf("%q lacks the _hearth/ prefix", m)
		}
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// session/status (ACP unstable): whether the daemon has a session in
// memory ("open") or only in the store ("saved"). It has no side effect:
// it opens, attaches and touches nothing (an open session's idle time goes
// on).

// sessionStatusRequest is session/status's params (SessionStatusRequest).
type sessionStatusRequest struct {
	SessionID string `json:"sessionId"`
}

// sessionStatusResponse is session/status's result (SessionStatusResponse).
type sessionStatusResponse struct {
	Status string `json:"status"` // open | saved
}

// sessionStatus is session/status's handler for d.
func sessionStatus(d *Daemon) handler {
	return func(ctx context.Context, params json.RawMessage) (any, error) { return statusOf(ctx, d, params) }
}

func statusOf(ctx context.Context, d *Daemon, params json.RawMessage) (any, error) {
	var req sessionStatusRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if req.SessionID == "" {
		return nil, rpc.InvalidParams("sessionId", "required")
	}
	d.mu.Lock()
	_, open := d.sessions[req.SessionID]
	d.mu.Unlock()
	if open {
		return sessionStatusResponse{Status: "open"}, nil
	}
	_, err := d.db.Session(ctx, req.SessionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, unknownSessionData(req.SessionID)
	case err != nil:
		return nil, fmt.Errorf("read session %s: %w", req.SessionID, err)
	}
	return sessionStatusResponse{Status: "saved"}, nil
}

// unknownSessionData is -32002 for session id, naming it in data as
// session/status must.
func unknownSessionData(id string) error {
	data, _ := json.Marshal(map[string]string{"sessionId": id}) // a string always encodes
	return &jsonrpc2.Error{Code: rpc.CodeResourceNotFound, Message: rpc.UnknownSession(id).Error(), Data: data}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// askSession opens the session an ask prompts: an earlier one of the
// workspace dir (--continue: its most recent), one named by id or a unique
// prefix of it (--session), or a new one in dir. An earlier session is
// resumed (ACP session/resume): the model has its history, nothing of it is
// printed again. A choice that names no session is a usage error (exit 2),
// as is a cwd the daemon refuses.
func askSession(ctx context.Context, client *rpc.Client, dir string, cont bool, id string) (acp.SessionId, error) {
	var info acp.SessionInfo
	switch {
	case cont:
		var r acp.ListSessionsResponse
		if err := client.Call(ctx, rpc.MethodSessionList, acp.ListSessionsRequest{Cwd: &dir}, &r); err != nil {
			return "", fmt.Errorf("list sessions: %w", err)
		}
		if len(r.Sessions) == 0 {
			return "", &exitError{2, fmt.Errorf("--continue: no earlier session in %s; leave --continue out to start one", dir)}
		}
		info = r.Sessions[0]
	case id != "":
		var err error
		if info, err = findSession(ctx, client, id); err != nil {
			return "", err
		}
	default:
		var s acp.NewSessionResponse
		err := client.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}, &s)
		if wire := (*jsonrpc2.Error)(nil); errors.As(err, &wire) && wire.Code == jsonrpc2.InvalidParams {
			return "", &exitError{2, fmt.Errorf("new session: %w", err)} // the workspace the daemon refuses
		}
		if err != nil {
			return "", fmt.Errorf("new session: %w", err)
		}
		return s.SessionId, nil
	}
	err := client.Call(ctx, rpc.MethodSessionResume, acp.ResumeSessionRequest{SessionId: info.SessionId, Cwd: info.Cwd,
		McpServers: []acp.McpServer{}}, nil)
	if err != nil {
		return "", fmt.Errorf("resume session %s: %w", info.SessionId, err)
	}
	return info.SessionId, nil
}

// findSession finds the stored session whose id is id, or the only one
// whose id begins with it, through session/list's pages.
func findSession(ctx context.Context, client *rpc.Client, id string) (acp.SessionInfo, error) {
	var found []acp.SessionInfo
	var cursor *string
	for {
		var r acp.ListSessionsResponse
		if err := client.Call(ctx, rpc.MethodSessionList, acp.ListSessionsRequest{Cursor: cursor}, &r); err != nil {
			return acp.SessionInfo{}, fmt.Errorf("list sessions: %w", err)
		}
		for _, s := range r.Sessions {
			if string(s.SessionId) == id {
				return s, nil
			}
			if strings.HasPrefix(string(s.SessionId), id) {
				found = append(found, s)
			}
		}
		if cursor = r.NextCursor; cursor == nil {
			break
		}
	}
	switch len(found) {
	case 0:
		return acp.SessionInfo{}, &exitError{2, fmt.Errorf("--session: no session id begins with %q (hearth inspect lists them)", id)}
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, s := range found[:min(len(found), 5)] {
		ids = append(ids, string(s.SessionId))
	}
	if len(found) > 5 {
		ids = append(ids, "…")
	}
	return acp.SessionInfo{}, &exitError{2, fmt.Errorf("--session: %q is the beginning of more than one session id (%s): give more of it", id, strings.Join(ids, ", "))}
}

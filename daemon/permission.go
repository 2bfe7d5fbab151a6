package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// Permission option ids: the ACP option kinds themselves.
var permissionOptions = []acp.PermissionOption{
	{OptionId: "allow_once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
	{OptionId: "allow_always", Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
	{OptionId: "reject_once", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
	{OptionId: "reject_always", Name: "Always reject", Kind: acp.PermissionOptionKindRejectAlways},
}

// clientsAskingOnWrite are the ACP clients (InitializeRequest.clientInfo's
// name) that ask their user before every fs/write_text_file, whatever the
// agent asked first: for an edit that goes entirely through that call,
// hearth does not ask too. acpx does so in its default permission mode,
// and refuses the write itself in a session it cannot ask in.
var clientsAskingOnWrite = map[string]bool{"acpx": true}

// authorize decides whether a call of a tool that changes things may run:
// by the session's mode, by an "always" the user gave earlier in the
// session, or by asking the editor that sent the prompt. It returns a
// result for the model when the call must not run. A client that asks its
// user before each write it is handed (clientsAskingOnWrite) is not asked
// first about an edit it will be handed whole.
func (t *sessionTools) authorize(ctx context.Context, call session.ToolCall, tool workspace.Tool, pv workspace.Preview) (*session.ToolResult, bool) {
	s := t.s
	s.mu.Lock()
	mode, asker := s.mode, s.prompter
	s.mu.Unlock()
	switch mode {
	case ModeReadOnly:
		return refused("the session is in read-only mode, so %s cannot run; tell the user what you would do, or ask them to switch modes", tool.Name), false
	case ModeFullAuto:
		return nil, true
	case ModeAutoEdit:
		if tool.Kind == "edit" {
			return nil, true
		}
	}
	if tool.Name == workspace.WriteStdinTool {
		return nil, true // it talks to a process the user let exec_command start
	}
	perms, err := t.d.db.Memory().Permissions(ctx, s.id)
	if err != nil {
		return refused("could not read the session's permissions: %v", err), false
	}
	switch perms[tool.Name] {
	case store.Allow:
		return nil, true
	case store.Reject:
		return refused("the user rejected every %s call in this session; do not retry it", tool.Name), false
	}
	if asker == nil {
		return refused("no editor is attached to approve %s", tool.Name), false
	}
	if asker.asksOnWrite.Load() && asker.fsWrite.Load() && pv.ToEditorOnly() {
		return nil, true // the client asks its user before it writes: one question for one change
	}
	// A permission request never goes to a connection a tool call made: a
	// command would approve its own next step. admit refuses those at
	// accept; this holds the rule where the request is sent.
	if why := callConn(asker.rw); why != "" {
		t.d.log.Info("permission not asked of a tool call's connection", "client", asker.id, "why", why)
		return refused("the prompt's connection may belong to a running command, which cannot approve %s; %s did not run", tool.Name, tool.Name), false
	}
	req := acp.RequestPermissionRequest{
		SessionId: acp.SessionId(s.id),
		ToolCall:  permissionToolCall(s, call, tool, pv),
		Options:   permissionOptions,
	}
	// The request goes straight to the wire; the tool_call updates before it
	// wait in the outbox. Let them out first, so the editor knows the call
	// it is asked about.
	asker.out.flush(ctx)
	var resp acp.RequestPermissionResponse
	if err := rpc.Call(ctx, asker.conn, rpc.MethodSessionRequestPermission, req, &resp); err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return refused("cancelled by the user"), false
		}
		return refused("the permission request failed (%v); %s did not run", err, tool.Name), false
	}
	if resp.Outcome.Selected == nil {
		return refused("cancelled by the user"), false
	}
	switch resp.Outcome.Selected.OptionId {
	case "allow_once":
		return nil, true
	case "allow_always":
		if err := t.d.db.Memory().SetPermission(ctx, s.id, tool.Name, store.Allow); err != nil {
			t.d.log.Warn("remember permission", "err", err)
		}
		return nil, true
	case "reject_always":
		if err := t.d.db.Memory().SetPermission(ctx, s.id, tool.Name, store.Reject); err != nil {
			t.d.log.Warn("remember permission", "err", err)
		}
	}
	return refused("the user rejected this %s call; the workspace is unchanged. Ask what they want instead", tool.Name), false
}

func refused(format string, args ...any) *session.ToolResult {
	return &session.ToolResult{Output: "error: " + fmt.Sprintf(format, args...), IsError: true}
}

// permissionToolCall describes the pending call for the permission prompt:
// title, kind, locations, and for an edit the diff it would make.
func permissionToolCall(s *openSession, call session.ToolCall, tool workspace.Tool, pv workspace.Preview) acp.ToolCallUpdate {
	kind := acp.ToolKind(tool.Kind)
	status := acp.ToolCallStatusPending
	title := pv.Title
	if title == "" {
		title = tool.Name
	}
	u := acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(call.CallID), Title: &title, Kind: &kind, Status: &status,
		RawInput: rawArgs(call.Arguments)}
	for _, l := range pv.Locations {
		u.Locations = append(u.Locations, acp.ToolCallLocation{Path: s.ws.root.Path() + "/" + l})
	}
	if pv.Diff != nil {
		u.Content = append(u.Content, diffContent(s, pv.Diff.Path, pv.Diff.Old, pv.Diff.New))
	}
	for _, f := range pv.Files { // apply_patch: every file it changes
		u.Content = append(u.Content, diffContent(s, f.Path, f.Old, f.New))
	}
	if pv.Command != "" {
		u.Content = append(u.Content, acp.ToolContent(acp.TextBlock("$ "+pv.Command)))
	}
	return u
}

// previewUpdate is the tool_call_update that shows a pending call's title,
// kind, locations and diff or command.
func previewUpdate(s *openSession, call session.ToolCall, tool workspace.Tool, pv workspace.Preview) acp.SessionUpdate {
	tc := permissionToolCall(s, call, tool, pv)
	tc.Status = nil // still in_progress: the status is the session's to report
	return acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: tc.ToolCallId, Title: tc.Title,
		Kind: tc.Kind, Locations: tc.Locations, Content: tc.Content, RawInput: tc.RawInput}}
}

// diffContent is an ACP diff block; oldText is absent for a new file.
func diffContent(s *openSession, rel, old, new string) acp.ToolCallContent {
	return diffBlock(s.ws.root.Path(), rel, old, new)
}

// diffBlock is an ACP diff block for rel under root, bounded for the editor
// (boundDiff); oldText is absent for a new file.
func diffBlock(root, rel, old, new string) acp.ToolCallContent {
	abs := root + "/" + rel
	if old == "" {
		_, new = boundDiff("", new)
		return acp.ToolDiffContent(abs, new)
	}
	old, new = boundDiff(old, new)
	return acp.ToolDiffContent(abs, new, old)
}

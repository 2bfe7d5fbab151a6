package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/workspace"
)

// editorCallTimeout bounds one fs/read_text_file or fs/write_text_file: an
// editor that does not answer within it fails the call (a read falls back to
// the disk, a write fails the tool call). Tests lower it.
var editorCallTimeout = 10 * time.Second

// editorFiles is the workspace.Editor side of one editor connection for one
// session: ACP's fs/read_text_file and fs/write_text_file, through the same
// connection the editor's permission requests use. A value built per tool
// call; it owns nothing.
type editorFiles struct {
	c       *clientConn
	session string
}

// toolEditor is the editor a tool call of s works through: the one that sent
// the running prompt (it is the one the user is looking at, and the one asked
// for permissions), with the halves it advertised at initialize. Without a
// prompting editor, or one without the capabilities, the tools use the disk.
// An editor that takes writes takes new files too: ACP's client creates a
// missing file, so a file the model creates shows up in the editor with
// its other changes, not behind the user's back on disk.
func (s *openSession) toolEditor() workspace.Editor {
	s.mu.Lock()
	c := s.prompter
	s.mu.Unlock()
	var ed workspace.Editor
	if c == nil {
		return ed
	}
	files := editorFiles{c: c, session: s.id}
	if c.fsRead.Load() {
		ed.Reader = files
	}
	if c.fsWrite.Load() {
		ed.Writer, ed.Creates = files, true
	}
	return ed
}

// ReadText asks the editor for the text of abs (already confined to the
// workspace by the tool).
func (e editorFiles) ReadText(ctx context.Context, abs string) (string, error) {
	var resp acp.ReadTextFileResponse
	err := e.call(ctx, rpc.MethodFsReadTextFile, acp.ReadTextFileRequest{SessionId: acp.SessionId(e.session), Path: abs}, &resp)
	return resp.Content, err
}

// WriteText hands the editor the new text of abs (already confined to the
// workspace by the tool).
func (e editorFiles) WriteText(ctx context.Context, abs, content string) error {
	return e.call(ctx, rpc.MethodFsWriteTextFile, acp.WriteTextFileRequest{SessionId: acp.SessionId(e.session), Path: abs, Content: content}, nil)
}

// call makes one fs call within editorCallTimeout; its error says, for the
// model, what the editor did.
func (e editorFiles) call(ctx context.Context, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, editorCallTimeout)
	defer cancel()
	err := rpc.Call(cctx, e.c.conn, method, params, result)
	var wire *jsonrpc2.Error
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // the turn was cancelled: the tool says so
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: the editor did not answer within %s", method, editorCallTimeout)
	case errors.As(err, &wire):
		said := editorSaid(wire)
		if refusal.MatchString(said) {
			return fmt.Errorf("%s: %w: %s", method, workspace.ErrEditorRefused, said)
		}
		return fmt.Errorf("%s: the editor answered %q (code %d)", method, said, wire.Code)
	default:
		return fmt.Errorf("%s: %v", method, err)
	}
}

// refusal matches what clients say when they, or their user, refuse an fs
// call rather than fail it (acpx: "Permission denied for
// fs/write_text_file", sent as an internal error).
var refusal = regexp.MustCompile(`(?i)\b(denied|refused|rejected|not allowed|not permitted)\b`)

// editorSaid is an editor's error in words: its message, and the details a
// client built on the ACP TypeScript SDK puts in data when what it threw
// was not a protocol error (its message is then only "Internal error").
func editorSaid(e *jsonrpc2.Error) string {
	if len(e.Data) == 0 {
		return e.Message
	}
	var data struct {
		Details string `json:"details"`
	}
	if json.Unmarshal(e.Data, &data) != nil || data.Details == "" {
		return e.Message
	}
	if e.Message == "" || e.Message == "Internal error" {
		return data.Details
	}
	return e.Message + ": " + data.Details
}

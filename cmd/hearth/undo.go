package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// runUndo puts back the files of a session's last turn that changed any, as
// /undo does in an editor: through the running daemon (its attached editors
// are told), or a daemon run in this process when none runs. The session is
// --session's, or the most recent of the current directory.
func runUndo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("undo", stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	id := fs.String("session", "", "the session: its id or a unique prefix (default: the most recent of the current directory)")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if fs.NArg() != 0 {
		return &exitError{2, errors.New("usage: hearth undo [--session SESSION] [--json]")}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	// No sandbox to configure: an undo runs no command.
	client, stop, err := daemonClient(ctx, cfg, "hearth undo")
	if err != nil {
		return err
	}
	defer stop()
	session := *id
	if session == "" {
		dir, err := askDir("")
		if err != nil {
			return err
		}
		var r acp.ListSessionsResponse
		if err := client.Call(ctx, rpc.MethodSessionList, acp.ListSessionsRequest{Cwd: &dir}, &r); err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
		if len(r.Sessions) == 0 {
			return &exitError{2, fmt.Errorf("no session in %s; name one with --session", dir)}
		}
		session = string(r.Sessions[0].SessionId)
	}
	var res rpc.UndoResult
	if err := client.Call(ctx, rpc.MethodHearthUndo, rpc.UndoParams{SessionID: session}, &res); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s: %s\n", res.SessionID, res.Message)
	if len(res.Conflicts) > 0 || len(res.Failed) > 0 {
		return &exitError{1, errors.New("some files were not put back")}
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// runCompact compacts a session now, as /compact does in an editor: through
// the running daemon (its attached editors are told), or a daemon run in
// this process when none runs.
func runCompact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compact", stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if fs.NArg() != 1 {
		return &exitError{2, errors.New("usage: hearth compact SESSION (its id or a unique prefix; hearth inspect lists them)")}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	// No sandbox to configure: a compaction runs no tool.
	client, stop, err := daemonClient(ctx, cfg, "hearth compact")
	if err != nil {
		return err
	}
	defer stop()
	var res rpc.CompactResult
	if err := client.Call(ctx, rpc.MethodHearthCompact, rpc.CompactParams{SessionID: fs.Arg(0)}, &res); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	if res.StopReason != string(acp.StopReasonEndTurn) || res.Compaction == nil {
		return fmt.Errorf("session %s was not compacted (%s)", res.SessionID, res.StopReason)
	}
	if res.Compaction.Summary == "" {
		fmt.Fprintf(stdout, "compacted %s through item %d with the API's compaction: the model goes on from the items it returned (an encrypted compaction item and your messages)\n",
			res.SessionID, res.Compaction.ThroughSeq)
		return nil
	}
	fmt.Fprintf(stdout, "compacted %s through item %d; the model goes on from this summary:\n\n%s\n", res.SessionID,
		res.Compaction.ThroughSeq, visibleText(res.Compaction.Summary))
	return nil
}

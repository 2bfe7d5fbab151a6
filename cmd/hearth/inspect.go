package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// runInspect asks the daemon, or reads the database itself when no daemon
// runs: inspecting history must not need a live daemon.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr)
	asJSON := fs.Bool("json", false, "print as JSON (the structs the daemon serves)")
	limit := fs.Int("limit", 50, "sessions to list")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	p := rpc.InspectParams{Limit: *limit}
	if fs.NArg() > 0 {
		p.SessionID = fs.Arg(0)
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var res rpc.InspectResult
	if client, err := connect(cctx, cfg); err == nil {
		defer client.Close()
		if err := client.Call(cctx, rpc.MethodHearthInspect, p, &res); err != nil {
			return err
		}
	} else {
		var ee *exitError
		if !errors.As(err, &ee) {
			return err
		}
		db, err := store.Open(cfg.DBPath())
		if err != nil {
			return err
		}
		defer db.Close()
		if res, err = daemon.Inspect(cctx, db, p); err != nil {
			if advice := store.Advice(db.Path(), err); advice != "" {
				return fmt.Errorf("%w; %s", err, advice)
			}
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	if res.Session != nil {
		printSession(stdout, res.Session)
		return nil
	}
	printSessions(stdout, res.Sessions)
	return nil
}

// printSessions and printSession show what the store holds — paths, the
// user's words, the model's summaries, API errors — made visible
// (visible.go): one line per cell, so a tab or newline cannot shift a column.
func printSessions(w io.Writer, ss []rpc.SessionInfo) {
	if len(ss) == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tWORKSPACE\tTITLE\tTURNS\tTOKENS IN/OUT\tCACHED\tLAST ACTIVITY")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, visibleLine(s.Root), visibleLine(s.Title), s.Turns, tokensInOut(s.Tokens),
			cachedShare(s.Tokens), s.LastActivity.Local().Format(time.DateTime))
	}
	tw.Flush()
}

func printSession(w io.Writer, s *rpc.SessionDetail) {
	fmt.Fprintf(w, "session   %s\nworkspace %s\nmodel     %s\nturns     %d\ntokens    %s (reasoning %d), %s of the input from the prompt cache\n\n",
		s.ID, visibleLine(s.Root), visibleLine(s.Model), len(s.Turns), tokensInOut(s.Tokens), s.Tokens.Reasoning, cachedShare(s.Tokens))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tSTATUS\tSTOP\tSTARTED\tERROR")
	for _, t := range s.Turns {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", t.Seq, t.Status, t.StopReason, t.Started.Local().Format(time.TimeOnly), visibleLine(t.Error))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tTURN\tORIGIN\tTYPE\tBYTES")
	for _, it := range s.Items {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\n", it.Seq, it.Turn, it.Origin, it.Type, len(it.Data))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tTURN\tCONN\tKIND\tPREVIOUS RESPONSE\tBYTES\tITEMS\tTOKENS IN/OUT\tCACHED\tFIRST EVENT\tTOTAL\tSTATUS\tWHY FULL")
	for _, r := range s.Requests {
		prev := r.PreviousResponseID
		if prev == "" {
			prev = "-"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%dms\t%dms\t%s\t%s\n", r.ID, r.Turn, r.Conn, r.Kind, prev,
			r.BytesSent, r.InputItems, tokensInOut(r.Tokens), cachedShare(r.Tokens), r.FirstEventMS, r.TotalMS, r.Status, visibleLine(r.FullReason))
	}
	tw.Flush()
	for _, c := range s.Compactions {
		if c.Summary == "" { // the API compacted: its items follow ThroughSeq
			fmt.Fprintf(w, "\ncompacted through item %d (%s), %s, by the API (%s): the model's view went on from the items after it, its compaction item encrypted\n",
				c.ThroughSeq, visibleLine(c.Reason), c.Created.Local().Format(time.DateTime), visibleLine(c.ResponseID))
			continue
		}
		fmt.Fprintf(w, "\ncompacted through item %d (%s), %s; the model's view went on from this summary:\n%s\n",
			c.ThroughSeq, visibleLine(c.Reason), c.Created.Local().Format(time.DateTime), visibleText(c.Summary))
	}
}

// tokensInOut is "12,345/678": input and output tokens.
func tokensInOut(u rpc.TokenUsage) string {
	return fmt.Sprintf("%d/%d", u.Input, u.Output)
}

// cachedShare is the cache-hit ratio as a percentage, "-" with no input.
func cachedShare(u rpc.TokenUsage) string {
	if u.Input == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*u.CacheHitRatio)
}

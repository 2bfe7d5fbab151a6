package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// runBench runs an N-step tool loop against the built-in simulator with a
// cost model, once per request mode, side by side in one run, and prints
// the ratios. The simulator's costs are printed next to the figures.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	steps := fs.Int("steps", 30, "tool calls per turn")
	runs := fs.Int("runs", 3, "turns per mode (the median is reported)")
	fileKB := fs.Int("file-kb", 4, "size of the file the model reads at each step")
	cost := sim.Cost{Handshake: 100 * time.Millisecond, PerRequest: 20 * time.Millisecond,
		PerInputKB: 2 * time.Millisecond, FirstToken: 50 * time.Millisecond, TokensPerSecond: 1000}
	fs.DurationVar(&cost.Handshake, "handshake", cost.Handshake, "simulated WebSocket handshake")
	fs.DurationVar(&cost.PerRequest, "per-request", cost.PerRequest, "simulated fixed cost per request")
	fs.DurationVar(&cost.PerInputKB, "per-input-kb", cost.PerInputKB, "simulated cost per KiB of input the server (re)processes")
	fs.DurationVar(&cost.FirstToken, "first-token", cost.FirstToken, "simulated time to first output")
	fs.Float64Var(&cost.TokensPerSecond, "tokens-per-second", cost.TokensPerSecond, "simulated output speed")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	dir, err := os.MkdirTemp("", "hearth-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte(strings.Repeat("the quick brown fox jumps over it\n", *fileKB*1024/34)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hearth bench: %d-step tool loop (read_file of a %d KiB file each step), %s per mode\n", *steps, *fileKB, plural(*runs, "turn"))
	fmt.Fprintf(stdout, "simulator cost model: %s\n\n", cost)

	modes := []benchMode{
		{name: "websocket, warmed, incremental", warm: true},
		{name: "  the same without compression", warm: true, plain: true},
		{name: "websocket, incremental, no warm-up"},
		{name: "websocket, every request full", full: true},
		{name: "http+sse (the fallback)", full: true, http: true},
	}
	results := make([]benchResult, len(modes))
	for i, m := range modes {
		var turns []benchResult
		for r := 0; r < *runs; r++ {
			res, err := benchTurn(ctx, dir, cost, *steps, m, fmt.Sprintf("b%d-%d", i, r))
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			turns = append(turns, res)
		}
		results[i] = median(turns)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tturn time\tvs first\trequests\tbytes sent\tvs first\ton the wire\tvs first\t")
	for i, m := range modes {
		r := results[i]
		fmt.Fprintf(tw, "%s\t%s\t%.2f×\t%d\t%d\t%.2f×\t%d\t%.2f×\t\n", m.name, r.turn.Round(time.Millisecond),
			float64(r.turn)/float64(results[0].turn), r.requests, r.bytes, float64(r.bytes)/float64(results[0].bytes),
			r.wire, float64(r.wire)/float64(results[0].wire))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nbytes sent: the requests' JSON; on the wire: what the server read from its sockets during the turn (permessage-deflate, HTTP headers and framing included)")
	return nil
}

// benchMode is one way of sending a turn's requests.
type benchMode struct {
	name                    string
	warm, full, http, plain bool // plain: no permessage-deflate
}

type benchResult struct {
	turn     time.Duration // from prompt to the end of the turn (the warm-up runs before, as at session/new)
	requests int
	bytes    int64 // the requests' JSON
	wire     int64 // what the server read from the network during the turn
}

func median(rs []benchResult) benchResult {
	best := rs[0]
	for _, r := range rs {
		n := 0
		for _, o := range rs {
			if o.turn < r.turn {
				n++
			}
		}
		if n == len(rs)/2 {
			best = r
		}
	}
	return best
}

// benchTurn opens a fresh simulator, database and client (a cold start, as
// a user's first turn in a workspace), optionally warms up, and times one
// turn.
func benchTurn(ctx context.Context, dir string, cost sim.Cost, steps int, m benchMode, id string) (benchResult, error) {
	srv := sim.New(sim.Options{Cost: cost})
	base, err := srv.Start()
	if err != nil {
		return benchResult{}, err
	}
	defer srv.Close()
	db, err := store.Open(filepath.Join(dir, id, "hearth.db"))
	if err != nil {
		return benchResult{}, err
	}
	defer db.Close()
	root, err := workspace.Open(dir)
	if err != nil {
		return benchResult{}, err
	}
	defer root.Close()
	if err := db.CreateSession(ctx, store.Session{ID: id, Root: root.Path()}); err != nil {
		return benchResult{}, err
	}
	client := session.NewClient(session.Config{BaseURL: base, Model: "sim-model", Instructions: "bench",
		Lanes: session.LanesOn, DisableIncremental: m.full, ForceHTTP: m.http, DisableCompression: m.plain}, nil)
	defer client.Close()
	conv, err := session.Open(ctx, session.Options{ID: id, Client: client, DB: db, Tools: benchTools{workspace.NewToolset(root)}})
	if err != nil {
		return benchResult{}, err
	}
	defer conv.Close()
	if m.warm {
		conv.Warm()
		done, result := conv.WarmupDone()
		<-done
		if err := result(); err != nil {
			return benchResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	prompt := fmt.Sprintf(`go sim:calls=%d sim:tool=read_file sim:args={"path":"data.txt"}`, steps)
	wire0, _ := srv.WireBytes()
	start := time.Now()
	if _, err := conv.Prompt(ctx, []json.RawMessage{session.UserMessage(prompt)}, nil); err != nil {
		return benchResult{}, err
	}
	res := benchResult{turn: time.Since(start)}
	wire1, _ := srv.WireBytes()
	res.wire = wire1 - wire0
	rows, err := db.Requests(ctx, id)
	if err != nil {
		return benchResult{}, err
	}
	for _, r := range rows {
		if r.Kind != store.KindWarmup {
			res.requests++
			res.bytes += r.BytesSent
		}
	}
	return res, nil
}

type benchTools struct{ ts *workspace.Toolset }

func (b benchTools) Specs() []json.RawMessage {
	var out []json.RawMessage
	for _, t := range b.ts.Tools() {
		out = append(out, t.Spec())
	}
	return out
}

func (b benchTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	r := b.ts.Run(ctx, call.Name, json.RawMessage(call.Arguments))
	return session.ToolResult{Output: r.Output, IsError: r.IsError}
}

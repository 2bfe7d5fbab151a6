package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hearthd/hearth/cmd/hearth/internal/bench"
	"github.com/hearthd/hearth/session/sim"
)

// runBench parses hearth bench's flags and runs it (package bench): an
// N-step tool loop against the built-in simulator with a cost model, in
// every request mode, each against the floor.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	o := bench.Options{Cost: sim.ReferenceCost()} // bench/peer.sh's too
	fs.IntVar(&o.Steps, "steps", 30, "tool calls per turn")
	fs.IntVar(&o.Runs, "runs", 3, "turns per mode, interleaved across the modes (median and p90 are reported)")
	fs.IntVar(&o.FileKB, "file-kb", 4, "size of the file the model reads at each step")
	fs.DurationVar(&o.Cost.Handshake, "handshake", o.Cost.Handshake, "simulated WebSocket handshake")
	fs.DurationVar(&o.Cost.PerRequest, "per-request", o.Cost.PerRequest, "simulated fixed cost per request")
	fs.DurationVar(&o.Cost.PerInputKB, "per-input-kb", o.Cost.PerInputKB, "simulated cost per KiB of input the server (re)processes")
	fs.DurationVar(&o.Cost.FirstToken, "first-token", o.Cost.FirstToken, "simulated time to first output")
	fs.Float64Var(&o.Cost.TokensPerSecond, "tokens-per-second", o.Cost.TokensPerSecond, "simulated output speed")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON")
	fs.StringVar(&o.Plot, "plot", "", "also write an SVG plot of end-to-end time against tool calls per mode to this file")
	plotSteps := fs.String("plot-steps", "5,10,15,20,25,30,35,40,45,50", "tool calls of the plot's points")
	fs.IntVar(&o.PlotRuns, "plot-runs", 1, "turns per mode and point of the plot (the median is plotted)")
	modeKeys := fs.String("modes", "", "comma-separated modes to run (their JSON keys, e.g. ws-incremental-warm,http-chained); all when empty")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if fs.NArg() > 0 {
		return &exitError{2, fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	var err error
	if o.PlotSteps, err = parseSteps(*plotSteps); err != nil {
		return &exitError{2, fmt.Errorf("--plot-steps: %w", err)}
	}
	if o.Modes, err = bench.SelectModes(*modeKeys); err != nil {
		return &exitError{2, fmt.Errorf("--modes: %w", err)}
	}
	switch c := o.Cost; {
	case o.Steps < 1:
		return &exitError{2, fmt.Errorf("--steps must be at least 1, not %d", o.Steps)}
	case o.Runs < 1 || o.PlotRuns < 1:
		return &exitError{2, fmt.Errorf("--runs and --plot-runs must be at least 1")}
	case o.FileKB < 1:
		return &exitError{2, fmt.Errorf("--file-kb must be at least 1, not %d", o.FileKB)}
	case c.Handshake < 0 || c.PerRequest < 0 || c.PerInputKB < 0 || c.FirstToken < 0 || c.TokensPerSecond < 0:
		return &exitError{2, fmt.Errorf("the cost model's parameters cannot be negative")}
	}
	return bench.Run(ctx, o, stdout)
}

// parseSteps reads a comma-separated list of positive step counts.
func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number of tool calls", f)
		}
		out = append(out, n)
	}
	return out, nil
}

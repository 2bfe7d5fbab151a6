package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hearthd/hearth/session/sim"
)

// benchOptions are hearth bench's flags.
type benchOptions struct {
	steps, runs, fileKB int
	cost                sim.Cost
	json                bool
	plot                string // SVG file; "" = no plot
	plotSteps           []int
	plotRuns            int
	modes               []benchMode
}

// runBench runs an N-step tool loop against the built-in simulator with a
// cost model, in every request mode, the modes interleaved over the
// repeats, and prints each mode's times against the floor: the server's own
// time for the minimal requests (benchFloor).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	var o benchOptions
	fs.IntVar(&o.steps, "steps", 30, "tool calls per turn")
	fs.IntVar(&o.runs, "runs", 3, "turns per mode, interleaved across the modes (median and p90 are reported)")
	fs.IntVar(&o.fileKB, "file-kb", 4, "size of the file the model reads at each step")
	o.cost = sim.ReferenceCost() // bench/peer.sh's too
	o.cost.Precise = true        // the floor is the cost model's: the simulator keeps to it, not to its timers' lateness
	fs.DurationVar(&o.cost.Handshake, "handshake", o.cost.Handshake, "simulated WebSocket handshake")
	fs.DurationVar(&o.cost.PerRequest, "per-request", o.cost.PerRequest, "simulated fixed cost per request")
	fs.DurationVar(&o.cost.PerInputKB, "per-input-kb", o.cost.PerInputKB, "simulated cost per KiB of input the server (re)processes")
	fs.DurationVar(&o.cost.FirstToken, "first-token", o.cost.FirstToken, "simulated time to first output")
	fs.Float64Var(&o.cost.TokensPerSecond, "tokens-per-second", o.cost.TokensPerSecond, "simulated output speed")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
	fs.StringVar(&o.plot, "plot", "", "also write an SVG plot of end-to-end time against tool calls per mode to this file")
	plotSteps := fs.String("plot-steps", "5,10,15,20,25,30,35,40,45,50", "tool calls of the plot's points")
	fs.IntVar(&o.plotRuns, "plot-runs", 1, "turns per mode and point of the plot (the median is plotted)")
	modeKeys := fs.String("modes", "", "comma-separated modes to run (their JSON keys, e.g. ws-incremental-warm,http-chained); all when empty")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if fs.NArg() > 0 {
		return &exitError{2, fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	var err error
	if o.plotSteps, err = parseSteps(*plotSteps); err != nil {
		return &exitError{2, fmt.Errorf("--plot-steps: %w", err)}
	}
	if o.modes, err = selectModes(*modeKeys); err != nil {
		return &exitError{2, fmt.Errorf("--modes: %w", err)}
	}
	switch {
	case o.steps < 1:
		return &exitError{2, fmt.Errorf("--steps must be at least 1, not %d", o.steps)}
	case o.runs < 1 || o.plotRuns < 1:
		return &exitError{2, fmt.Errorf("--runs and --plot-runs must be at least 1")}
	case o.fileKB < 1:
		return &exitError{2, fmt.Errorf("--file-kb must be at least 1, not %d", o.fileKB)}
	case o.cost.Handshake < 0 || o.cost.PerRequest < 0 || o.cost.PerInputKB < 0 || o.cost.FirstToken < 0 || o.cost.TokensPerSecond < 0:
		return &exitError{2, fmt.Errorf("the cost model's parameters cannot be negative")}
	}

	dir, err := os.MkdirTemp("", "hearth-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	line := "the quick brown fox jumps over it\n"
	if err := os.WriteFile(filepath.Join(ws, "data.txt"), []byte(strings.Repeat(line, o.fileKB*1024/len(line))), 0o644); err != nil {
		return err
	}
	b := &bencher{dir: dir, root: ws, cost: o.cost}
	if !o.json {
		fmt.Fprintf(stdout, "hearth bench: %d-step tool loop (read_file of a %d KiB file each step), %d turns per mode, interleaved\n", o.steps, o.fileKB, o.runs)
		fmt.Fprintf(stdout, "simulator cost model: %s\n\n", o.cost)
	}
	results, err := b.measure(ctx, o.modes, o.steps, o.runs)
	if err != nil {
		return err
	}
	report := benchReport{Steps: o.steps, Runs: o.runs, FileKB: o.fileKB, Cost: costJSON(o.cost),
		FloorMethod: floorMethod, Modes: results}
	if o.plot != "" {
		if report.Plot, err = b.plot(ctx, o.modes, o.plotSteps, o.plotRuns, o.plot); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return printBench(stdout, report)
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

// selectModes returns the modes named in keys (comma-separated JSON keys),
// in the order the report always has them; all of them when keys is empty.
func selectModes(keys string) ([]benchMode, error) {
	all := benchModes()
	if strings.TrimSpace(keys) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		if !slices.ContainsFunc(all, func(m benchMode) bool { return m.key == k }) {
			var known []string
			for _, m := range all {
				known = append(known, m.key)
			}
			return nil, fmt.Errorf("no mode %q (the modes: %s)", k, strings.Join(known, ", "))
		}
		want[k] = true
	}
	var out []benchMode
	for _, m := range all {
		if want[m.key] {
			out = append(out, m)
		}
	}
	return out, nil
}

// measure runs every mode runs times, interleaved (mode 1, 2, …, then again),
// so that a change in the machine's load falls on all of them alike.
func (b *bencher) measure(ctx context.Context, modes []benchMode, steps, runs int) ([]benchModeResult, error) {
	samples := make([][]benchSample, len(modes))
	for r := 0; r < runs; r++ {
		for i, m := range modes {
			s, err := b.run(ctx, m, steps)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
			samples[i] = append(samples[i], s)
		}
	}
	out := make([]benchModeResult, len(modes))
	for i, m := range modes {
		out[i] = summarize(m, samples[i])
	}
	return out, nil
}

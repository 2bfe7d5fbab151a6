// Package bench is what `hearth bench` measures: a turn of N tool calls
// timed from a cold start in each way of sending its requests (Mode) against
// the built-in simulator with a cost model, the modes interleaved over the
// repeats, each against the floor (the server's own time for the minimal
// requests, floorOf), printed as a table or JSON, with an optional SVG plot
// of time against tool calls. cmd/hearth parses the flags into Options.
//
// Imports: session, session/sim, store, workspace; only cmd/hearth imports
// it.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hearthd/hearth/session/sim"
)

// Options are one run of hearth bench, as its flags set them.
type Options struct {
	Steps  int // tool calls per turn
	Runs   int // turns per mode
	FileKB int // size of the file the model reads at each step
	// Cost is the simulator's cost model. Run keeps the simulator to it
	// (sim.Cost.Precise): the floor is the cost model's.
	Cost      sim.Cost
	JSON      bool
	Plot      string // SVG file; "" = no plot
	PlotSteps []int  // tool calls of the plot's points
	PlotRuns  int    // turns per mode and point of the plot
	Modes     []Mode // from SelectModes
}

// Run measures what o says and prints the report on stdout. Its files (a
// workspace, a database per turn) live in a temporary directory removed at
// the end; the plot, if asked for, is written to o.Plot.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	o.Cost.Precise = true
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
	if err := os.WriteFile(filepath.Join(ws, "data.txt"), []byte(strings.Repeat(line, o.FileKB*1024/len(line))), 0o644); err != nil {
		return err
	}
	b := &runner{dir: dir, root: ws, cost: o.Cost}
	if !o.JSON {
		fmt.Fprintf(stdout, "hearth bench: %d-step tool loop (read_file of a %d KiB file each step), %d turns per mode, interleaved\n", o.Steps, o.FileKB, o.Runs)
		fmt.Fprintf(stdout, "simulator cost model: %s\n\n", o.Cost)
	}
	results, err := b.measure(ctx, o.Modes, o.Steps, o.Runs)
	if err != nil {
		return err
	}
	rep := report{Steps: o.Steps, Runs: o.Runs, FileKB: o.FileKB, Cost: costJSON(o.Cost),
		FloorMethod: floorMethod, Modes: results}
	if o.Plot != "" {
		if rep.Plot, err = b.plot(ctx, o.Modes, o.PlotSteps, o.PlotRuns, o.Plot); err != nil {
			return err
		}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printTable(stdout, rep)
}

// SelectModes returns the modes named in keys (comma-separated JSON keys),
// in the order the report always has them; all of them when keys is empty.
func SelectModes(keys string) ([]Mode, error) {
	all := allModes()
	if strings.TrimSpace(keys) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		if !slices.ContainsFunc(all, func(m Mode) bool { return m.key == k }) {
			var known []string
			for _, m := range all {
				known = append(known, m.key)
			}
			return nil, fmt.Errorf("no mode %q (the modes: %s)", k, strings.Join(known, ", "))
		}
		want[k] = true
	}
	var out []Mode
	for _, m := range all {
		if want[m.key] {
			out = append(out, m)
		}
	}
	return out, nil
}

// measure runs every mode runs times, interleaved (mode 1, 2, …, then again),
// so that a change in the machine's load falls on all of them alike.
func (b *runner) measure(ctx context.Context, modes []Mode, steps, runs int) ([]modeResult, error) {
	samples := make([][]turnSample, len(modes))
	for r := 0; r < runs; r++ {
		for i, m := range modes {
			s, err := b.run(ctx, m, steps)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
			samples[i] = append(samples[i], s)
		}
	}
	out := make([]modeResult, len(modes))
	for i, m := range modes {
		out[i] = summarize(m, samples[i])
	}
	return out, nil
}

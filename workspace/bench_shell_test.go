//go:build linux

package workspace

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// One command's own cost: the shell tool running `cat small.txt` (4 KiB)
// through the sandbox, as hearth runs every command the model asks for, next
// to the same command without it and the same file through read_file. There
// is no model here: ns/op is the tool's whole time, start to result:
//
//	go test -run '^$' -bench 'Shell|ReadFileTool' -benchtime 50x ./workspace/
//
// The cell is this test binary (TestMain runs __sandbox-exec), or hearth's
// own with -helper (a larger binary, slower to start):
//
//	go build -o /tmp/hearth ./cmd/hearth
//	go test -run '^$' -bench 'Shell|ReadFileTool' -benchtime 50x ./workspace/ -args -helper /tmp/hearth
//
// The network is on (a Toolset's default, and ask's and auto-edit's), or
// off (full-auto's default: an empty network namespace for each command).

var benchHelper = flag.String("helper", "", "the sandboxed command benchmarks' helper: a hearth binary (run as `hearth __sandbox-exec`) instead of this test binary")

// useBenchSandbox sets the sandbox to run commands in cells of this test
// binary, or of -helper's when it names one, until the benchmark ends; it
// returns the configuration set.
func useBenchSandbox(b *testing.B) sandbox.Config {
	exe, err := os.Executable()
	if *benchHelper != "" {
		exe, err = filepath.Abs(*benchHelper)
	}
	if err != nil {
		b.Fatal(err)
	}
	cfg := sandbox.Config{Helper: []string{exe, sandboxSubcommand}}
	sandbox.Set(cfg)
	b.Cleanup(func() { sandbox.Set(sandbox.Config{}) })
	return cfg
}

// smallFile is 4 KiB of text, the file bench/peer.sh's rollout reads.
var smallFile = strings.Repeat("the quick brown fox jumps over it\n", 120)

// benchSmallFile is a Toolset on a new tree holding small.txt.
func benchSmallFile(b *testing.B) *Toolset {
	r, root, _ := newTree(b)
	writeFile(b, filepath.Join(root, "small.txt"), smallFile)
	return NewToolset(r)
}

// benchTool runs tool with args b.N times and checks each result holds the
// file. Besides ns/op it reports cpu-ms/op: the CPU time (user and system) of
// this process and of the processes it started — the cell and what it ran,
// counted once the cell is closed and reaped after the loop — which a
// machine's load moves less than the wall time.
func benchTool(b *testing.B, ts *Toolset, cfg sandbox.Config, tool string, args []byte) {
	benchToolPaced(b, ts, cfg, tool, args, 0)
}

// modelGap is the pause between two calls of a paced benchmark: a model's
// answer, shorter than any real one.
const modelGap = 20 * time.Millisecond

// benchToolPaced is benchTool with gap between calls, off the clock: the
// pattern of an agent's loop, where the model answers between two calls
// (and the cell makes the next call's init meanwhile).
func benchToolPaced(b *testing.B, ts *Toolset, cfg sandbox.Config, tool string, args []byte, gap time.Duration) {
	b.ReportAllocs()
	cpu0 := treeCPUTime(b)
	for b.Loop() {
		if gap > 0 {
			b.StopTimer()
			time.Sleep(gap) // the model's answer, not a wait for an event
			b.StartTimer()
		}
		res := ts.Run(context.Background(), tool, args)
		if res.IsError || !strings.Contains(res.Output, "the quick brown fox") {
			b.Fatalf("%s: %+v", tool, res)
		}
	}
	b.StopTimer()
	sandbox.Set(cfg) // closes the cells and waits for them: their time is the children's now
	b.ReportMetric(float64(treeCPUTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// treeCPUTime is the user and system time of this process and its reaped
// children so far.
func treeCPUTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

func BenchmarkShellSandboxed(b *testing.B) {
	ts := benchSmallFile(b)
	benchTool(b, ts, useBenchSandbox(b), "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkShellSandboxedPaced(b *testing.B) {
	ts := benchSmallFile(b)
	benchToolPaced(b, ts, useBenchSandbox(b), "shell", []byte(`{"command":"cat small.txt"}`), modelGap)
}

func BenchmarkShellUnsandboxedPaced(b *testing.B) {
	ts := benchSmallFile(b)
	sandbox.Set(sandbox.Config{})
	benchToolPaced(b, ts, sandbox.Config{}, "shell", []byte(`{"command":"cat small.txt"}`), modelGap)
}

func BenchmarkShellSandboxedNoNetwork(b *testing.B) {
	ts := benchSmallFile(b)
	benchTool(b, ts.WithNetwork(sandbox.Network{Off: true, Why: "full-auto mode"}), useBenchSandbox(b), "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkShellUnsandboxed(b *testing.B) {
	ts := benchSmallFile(b)
	sandbox.Set(sandbox.Config{}) // /bin/sh -c, as where the OS has no helper
	benchTool(b, ts, sandbox.Config{}, "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkReadFileTool(b *testing.B) {
	ts := benchSmallFile(b)
	benchTool(b, ts, sandbox.Config{}, "read_file", []byte(`{"path":"small.txt"}`))
}

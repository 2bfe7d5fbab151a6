//go:build unix

package sandbox

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// One command's own cost: the shell tool running `cat small.txt` (4 KiB)
// through the sandbox helper, as hearth runs every command the model asks
// for, next to the same command without the helper and the same file
// through read_file. There is no model here: ns/op is the tool's whole
// time, start to result. Fast enough for -benchtime 50x:
//
//	go test -run '^$' -bench 'Shell|ReadFileTool' -benchtime 50x ./workspace/
//
// The helper is this test binary (TestMain runs __sandbox-exec), as in the
// sandbox tests, or hearth's own with -helper (a larger binary, slower to
// start):
//
//	go build -o /tmp/hearth ./cmd/hearth
//	go test -run '^$' -bench 'Shell|ReadFileTool' -benchtime 50x ./workspace/ -args -helper /tmp/hearth
//
// The network is on (a Toolset's default, and ask's and auto-edit's), or
// off (NoNetwork: full-auto's default, an empty network namespace for each
// command).

var benchHelper = flag.String("helper", "", "the sandboxed command benchmarks' helper: a hearth binary (run as `hearth __sandbox-exec`) instead of this test binary")

// useBenchSandbox is useSandbox with -helper's binary when it names one.
func useBenchSandbox(b *testing.B) {
	if *benchHelper == "" {
		useSandbox(b)
		return
	}
	exe, err := filepath.Abs(*benchHelper)
	if err != nil {
		b.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}})
	b.Cleanup(func() { Set(Config{}) })
}

// smallFile is 4 KiB of text, the file bench/peer.sh's rollout reads.
var smallFile = strings.Repeat("the quick brown fox jumps over it\n", 120)

// benchSmallFile is a Toolset on a new tree holding small.txt.
func benchSmallFile(b *testing.B) *shellTool {
	r, root, _ := newTree(b)
	writeFile(b, filepath.Join(root, "small.txt"), smallFile)
	return newShellTool(r)
}

// benchTool runs tool with args b.N times and checks each result holds
// the file. Besides ns/op it reports cpu-ms/op: the CPU time (user and
// system) of this process and of the processes it started and reaped — the
// helper, sh, cat — and of the running sandbox cells and the calls they
// reaped (in clock ticks: 10 ms), which a machine's load moves less than
// the wall time.
func benchTool(b *testing.B, ts *shellTool, tool string, args []byte) {
	b.ReportAllocs()
	cpu0 := treeCPUTime(b)
	for b.Loop() {
		res := ts.Run(context.Background(), tool, args)
		if res.IsError || !strings.Contains(res.Output, "the quick brown fox") {
			b.Fatalf("%s: %+v", tool, res)
		}
	}
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
	return total + cellsCPUTime(b)
}

func BenchmarkShellSandboxed(b *testing.B) {
	if !sandboxSupported {
		b.Skip("no sandbox helper on this OS")
	}
	ts := benchSmallFile(b)
	useBenchSandbox(b)
	benchTool(b, ts, "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkShellSandboxedNoNetwork(b *testing.B) {
	if !sandboxSupported {
		b.Skip("no sandbox helper on this OS")
	}
	ts := benchSmallFile(b)
	useBenchSandbox(b)
	benchTool(b, ts.WithNetwork(Network{Off: true, Why: "full-auto mode"}), "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkShellUnsandboxed(b *testing.B) {
	ts := benchSmallFile(b)
	Set(Config{}) // /bin/sh -c, as where the OS has no helper
	benchTool(b, ts, "shell", []byte(`{"command":"cat small.txt"}`))
}

func BenchmarkReadFileTool(b *testing.B) {
	ts := benchSmallFile(b)
	benchTool(b, ts, "read_file", []byte(`{"path":"small.txt"}`))
}

package sandbox

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What a command's output keeps: its first shellHeadBytes and last
// shellTailBytes; the middle is counted, not kept.
const (
	shellHeadBytes = 16 << 10
	shellTailBytes = 16 << 10
)

// Command is one shell command line to run for the model. A plain value
// for one Run.
type Command struct {
	Root    string        // the workspace root, absolute, symlinks evaluated
	Dir     string        // the working directory: Root or a directory below it
	Line    string        // run with /bin/sh -c
	Net     Network       // whether it may use the network
	Access  Access        // what it may write
	Timeout time.Duration // it is killed after
	// Show, when not nil, is handed the output so far while the command
	// runs (see liveHeadBytes), never after Run returns.
	Show func(output string)
	// Changes, when not nil, is told of the command's file changes below
	// Root where the sandbox can trap them (ChangeHook, trap_linux.go).
	Changes ChangeHook
}

// Outcome is how one command ended. A plain value.
type Outcome struct {
	Output    string // stdout and stderr combined, capped head and tail
	ExitCode  int    // when the command exited by itself
	Signal    string // the signal that killed it, when one did ("killed")
	TimedOut  bool   // killed because the timeout passed
	Cancelled bool   // killed because ctx was cancelled
	Escaped   bool   // a process outside the group kept the output open; reading stopped
	Err       error  // the command could not be started
	Confined  bool   // it ran through the sandbox helper or in a cell
	Trapped   bool   // Command.Changes was told of every file it changed
	// Untouched says the trap saw every process of the command end
	// without making a syscall that can change a file, anywhere: a count
	// of the syscalls, which a process cannot hide as it can lie about
	// the path one names.
	Untouched bool
	// Total counts the bytes it printed, Output's cut middle included.
	Total int64
	// Wall is how long it ran, from its start to its end.
	Wall   time.Duration
	signum int // the number of Signal
}

// Run runs c and waits for it and everything it started: in the
// workspace's cell when the sandbox has cells, else through the sandbox
// helper when the process configured one (Set) and the OS has it, else with
// /bin/sh -c (with the network whatever c.Net says: NetworkEnforced reports
// it). Cancelling ctx kills it.
func Run(ctx context.Context, c Command) Outcome {
	var live io.Writer
	if c.Show != nil {
		l := startLive(c.Show)
		defer l.stop() // before the result: the call's last update is its end
		live = l
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Outcome{Err: err}
	}
	return run(ctx, c, callIO{out: pw, read: pr}, live)
}

// callIO is where one command's input and output go: its stdin (nil:
// /dev/null), the descriptor it writes stdout and stderr to, and the one
// the daemon reads that output from (a pipe's two ends, or a pty's slave
// and master when tty). run owns all three: it closes in and out once the
// command holds them, and read when it returns.
type callIO struct {
	in, out, read *os.File
	tty           bool
}

// close closes the descriptors the command was to hold, for a command
// that did not start.
func (cio callIO) close() {
	cio.out.Close()
	if cio.in != nil && cio.in != cio.out {
		cio.in.Close()
	}
}

// run is Run with the command's descriptors given.
func run(ctx context.Context, c Command, cio callIO, live io.Writer) (o Outcome) {
	start := time.Now()
	defer func() { o.Wall = time.Since(start) }()
	env := currentToolEnv()
	run, inCell := runInCell(ctx, current(), c.Root, c.Dir, c.Line, c.Net, c.Access, env, c.Timeout, live, cio, c.Changes)
	if inCell {
		run.Confined = true
		return run
	}
	prog, helper := commandProgram(c.Line, c.Dir, env), false
	if sb := current(); sandboxSupported && len(sb.Helper) > 0 {
		argv := sb.helperArgs(c.Root, c.Line, c.Net, c.Access)
		argv = slices.Insert(argv, len(argv)-2, pidsFlag, strconv.Itoa(sb.pidsBound())) // before -- COMMAND
		prog, helper = program{path: argv[0], argv: argv, env: env}, true
	}
	run = runCommand(ctx, c.Dir, prog, helper, c.Timeout, live, cio)
	run.Confined = helper
	return run
}

// Report is the outcome as the model reads it, in the layout the models
// trained on shell tools know: "Exit code: N", "Wall time: S seconds", the
// original token count when the output was cut, then "Output:" and the
// output, its cut middle marked, with a note after it when reading
// stopped early or the command did not exit by itself (killed after its
// timeout: code 124; cancelled: 130; by a signal: 128 + its number).
// failed says it did not exit 0. timeout is the command's, for the
// message of one killed by it.
func (o Outcome) Report(timeout time.Duration) (text string, failed bool) {
	code, note := o.Code(), ""
	switch {
	case o.TimedOut:
		note = fmt.Sprintf("[killed after timeout of %d ms]", timeout.Milliseconds())
	case o.Cancelled:
		note = "[cancelled]"
	case o.Signal != "":
		note = fmt.Sprintf("[killed by signal: %s]", o.Signal)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Exit code: %d\nWall time: %s seconds\n", code, strconv.FormatFloat(math.Round(o.Wall.Seconds()*10)/10, 'f', -1, 64))
	if o.Total > int64(len(o.Output)) {
		fmt.Fprintf(&out, "Original token count: %d\n", ApproxTokens(o.Total))
	}
	out.WriteString("Output:\n")
	out.WriteString(o.Output)
	if o.Output != "" && !strings.HasSuffix(o.Output, "\n") {
		out.WriteByte('\n')
	}
	if o.Escaped {
		out.WriteString("[a process that left the command's process group kept the output open; stopped reading]\n")
	}
	out.WriteString(note)
	failed = o.TimedOut || o.Cancelled || o.Signal != "" || o.ExitCode != 0
	return out.String(), failed
}

// Code is the exit code the model is told: the command's own, or 124 when
// its timeout killed it, 130 when it was cancelled, 128 + the signal's
// number when a signal killed it.
func (o Outcome) Code() int {
	switch {
	case o.TimedOut:
		return 124
	case o.Cancelled:
		return 130
	case o.Signal != "":
		return 128 + o.signum
	}
	return o.ExitCode
}

// ApproxTokens is about how many tokens n bytes of text take: a quarter
// of n, rounded up.
func ApproxTokens(n int64) int64 { return (n + 3) / 4 }

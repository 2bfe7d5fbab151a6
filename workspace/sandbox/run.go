package sandbox

import (
	"context"
	"fmt"
	"io"
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
	Timeout time.Duration // it is killed after
	// Show, when not nil, is handed the output so far while the command
	// runs (see liveHeadBytes), never after Run returns.
	Show func(output string)
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
	env := currentToolEnv()
	run, inCell := runInCell(ctx, current(), c.Root, c.Dir, c.Line, c.Net, env, c.Timeout, live)
	if inCell {
		run.Confined = true
		return run
	}
	prog, helper := commandProgram(c.Line, c.Dir, env), false
	if sb := current(); sandboxSupported && len(sb.Helper) > 0 {
		argv := sb.helperArgs(c.Root, c.Line, c.Net)
		prog, helper = program{path: argv[0], argv: argv, env: env}, true
	}
	run = runCommand(ctx, c.Dir, prog, helper, c.Timeout, live)
	run.Confined = helper
	return run
}

// Report is the outcome as the model reads it: the output ("(no output)"
// for none), a note when reading stopped early, and how the command ended
// ("[exit code 0]"); failed says it did not exit 0. timeout is the
// command's, for the message of one killed by it.
func (o Outcome) Report(timeout time.Duration) (text string, failed bool) {
	var out strings.Builder
	out.WriteString(o.Output)
	if o.Output == "" {
		out.WriteString("(no output)")
	}
	if !strings.HasSuffix(o.Output, "\n") {
		out.WriteByte('\n')
	}
	if o.Escaped {
		out.WriteString("[a process that left the command's process group kept the output open; stopped reading]\n")
	}
	switch {
	case o.TimedOut:
		fmt.Fprintf(&out, "[killed after timeout of %d ms]", timeout.Milliseconds())
	case o.Cancelled:
		out.WriteString("[cancelled]")
	case o.Signal != "":
		fmt.Fprintf(&out, "[killed by signal: %s]", o.Signal)
	default:
		fmt.Fprintf(&out, "[exit code %d]", o.ExitCode)
	}
	failed = o.TimedOut || o.Cancelled || o.Signal != "" || o.ExitCode != 0
	return out.String(), failed
}

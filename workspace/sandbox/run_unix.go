//go:build unix

package sandbox

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Unsupported is empty where the shell tool works.
const Unsupported = ""

const (
	// KillGrace is how long the command's process group has between
	// SIGTERM and SIGKILL.
	KillGrace = time.Second
	// drainWait bounds the wait for the end of the output once the whole
	// group is dead; only a process that left the group can hold it longer.
	drainWait = 500 * time.Millisecond
	// helperSlack is how much longer than KillGrace the sandbox helper,
	// which runs the grace period itself, has to finish before the group
	// gets SIGKILL from here.
	helperSlack = 3 * time.Second
)

// runCommand runs prog (the command's program itself, /bin/sh -c command,
// or the sandbox helper that runs it, see Config) in dir, in a process
// group of its own (a session of its own, with cio's terminal as its
// controlling one, when cio.tty), stdin cio.in (/dev/null when nil),
// stdout and stderr into cio.out. When the process
// exits, the timeout passes or ctx is cancelled, whatever is left of the
// group gets SIGTERM and, after KillGrace (plus helperSlack for the helper,
// which kills the rest of the call itself, setsid'd processes included),
// SIGKILL; runCommand returns after the process is reaped and both of its
// goroutines (the output reader and the exit waiter) have ended. The output
// is copied to live as well, when it is not nil.
func runCommand(ctx context.Context, dir string, prog program, helper bool, timeout time.Duration, live io.Writer, cio callIO) Outcome {
	pr := cio.read
	defer pr.Close()
	cmd := &exec.Cmd{Path: prog.path, Args: prog.argv, Dir: dir, Env: prog.env}
	cmd.Stdout, cmd.Stderr = cio.out, cio.out // *os.File: the child gets the fd itself, exec starts no copier
	if cio.in != nil {
		cmd.Stdin = cio.in
	}
	cmd.SysProcAttr = shellProcAttr(helper)
	if cio.tty {
		// A session of its own (its id the group's, as Setpgid gives),
		// the terminal on its stdin its controlling one.
		cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = false, true, true, 0
	}
	release, err := startCall(cmd) // the daemon refuses its processes' connections until release
	cio.close()                    // the children hold the write end now; EOF comes when they are all gone
	if err != nil {
		return Outcome{Err: err}
	}
	pgid := cmd.Process.Pid

	output := readOutput(pr, live)
	exited := make(chan struct{}) // closed when the shell has exited (on Linux, not yet reaped)
	var exitErr error
	go func() {
		defer close(exited)
		exitErr = awaitExit(cmd)
	}()

	var run Outcome
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		run.TimedOut = true
	case <-ctx.Done():
		run.Cancelled = true
	}
	if run.TimedOut || run.Cancelled {
		select {
		case <-exited: // finished at the same moment: report how it ended
			run.TimedOut, run.Cancelled = false, false
		default:
		}
	}

	stopGroup(pgid, helper, exited, output.done) // nothing in the group outlives the call
	<-exited
	exitErr = reap(cmd, exitErr)
	release()

	run.Output, run.Escaped = output.finish()
	run.Total = output.out.total

	if st := cmd.ProcessState; st != nil {
		run.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			run.Signal, run.signum = ws.Signal().String(), int(ws.Signal())
		}
	} else if exitErr != nil {
		run.Err = exitErr
	}
	return run
}

// stopGroup ends the command's process group: SIGTERM, then SIGKILL once
// the shell has exited and its output closed, or after the grace (longer
// for the sandbox helper, which reaps its own descendants first). While the
// shell is unreaped its pid, which is the group's id, cannot be reused, so
// the signals reach only the command's processes.
func stopGroup(pgid int, helper bool, exited, read <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	wait := KillGrace
	if helper {
		wait += helperSlack
	}
	grace := time.NewTimer(wait)
	defer grace.Stop()
	for exited != nil || read != nil {
		select {
		case <-exited:
			exited = nil
		case <-read:
			read = nil
		case <-grace.C:
			exited, read = nil, nil
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

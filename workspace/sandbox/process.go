package sandbox

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/creack/pty"
)

// A Process is a command that may outlive the call that started it: Start
// runs it exactly as Run runs a command (the same cell or helper, mode,
// network, Landlock rules, pid namespace and process bound), but with a
// stdin Write feeds — a pipe, or a pseudo-terminal whose slave is its
// controlling terminal — and no end but its own exit, Kill, or
// Command.Timeout. Its goroutine, started by Start, owns the command and
// ends when the command and everything it started have ended; Kill ends
// it and waits for that goroutine. The owner must Kill every Process it
// started (a session does, when it closes).
type Process struct {
	in  *os.File // its stdin's write end, or the pty's master
	tty bool

	wmu sync.Mutex // one Write at a time

	cancel context.CancelFunc
	done   chan struct{} // closed when the command has ended and its output is read
	end    Outcome       // set before done is closed
}

// processTerm is the size of a process's terminal.
var processTerm = pty.Winsize{Rows: 24, Cols: 80}

// NoTimeout, as Command.Timeout, lets a started Process run until it exits
// or is killed.
const NoTimeout = time.Duration(math.MaxInt64)

// Start starts c as a Process, with a pseudo-terminal when tty (else
// pipes), its output (stdout and stderr as one stream) copied to output
// as it comes, from the Process's goroutine, one Write at a time, never
// after Wait has returned. c.Show is not used.
func Start(c Command, tty bool, output io.Writer) (*Process, error) {
	if Unsupported != "" {
		return nil, errors.New(Unsupported)
	}
	var cio callIO
	var in *os.File
	if tty {
		master, slave, err := pty.Open()
		if err != nil {
			return nil, err
		}
		if err := pty.Setsize(slave, &processTerm); err != nil {
			master.Close()
			slave.Close()
			return nil, err
		}
		cio, in = callIO{in: slave, out: slave, read: master, tty: true}, master
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		ir, iw, err := os.Pipe()
		if err != nil {
			pr.Close()
			pw.Close()
			return nil, err
		}
		cio, in = callIO{in: ir, out: pw, read: pr}, iw
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Process{in: in, tty: tty, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer cancel()
		p.end = run(ctx, c, cio, output)
		if !tty {
			in.Close() // the master is read's, which run closed
		}
	}()
	return p, nil
}

// Write hands b to the process's stdin, waiting at most wait for room
// (a process that does not read fills the pipe): n says how much went.
func (p *Process) Write(b []byte, wait time.Duration) (int, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	select {
	case <-p.done:
		return 0, errors.New("the process has ended")
	default:
	}
	p.in.SetWriteDeadline(time.Now().Add(wait))
	defer p.in.SetWriteDeadline(time.Time{})
	return p.in.Write(b)
}

// Done is closed once the process has ended and all its output is read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process's end and says how it ended (its Output is
// empty: the output went to Start's writer).
func (p *Process) Wait() Outcome {
	<-p.done
	return p.end
}

// Kill ends the process and everything it started — SIGTERM, then
// SIGKILL after KillGrace — and waits for its end. Killing a process
// that has ended does nothing.
func (p *Process) Kill() Outcome {
	p.cancel()
	return p.Wait()
}

// TTY reports whether the process has a terminal.
func (p *Process) TTY() bool { return p.tty }

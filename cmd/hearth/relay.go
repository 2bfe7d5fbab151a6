package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// relayRedials is how many times the relay dials again when the daemon's
// connection fails before the daemon sent anything.
const relayRedials = 3

// relayKeep bounds what the relay keeps of the editor's bytes until the
// daemon's first one: an editor's first requests (initialize, session/new)
// are kilobytes; one that writes more before any answer is not resent.
const relayKeep = 8 << 20

// relay copies the editor's bytes (in) to the daemon and the daemon's to
// the editor (out) until the daemon hangs up or ctx ends. Until the daemon
// has sent its first byte, the editor's bytes are kept: a daemon killed a
// moment ago still accepts on its socket while the kernel tears it down,
// then resets what it accepted, and a relay that gave up then would leave
// the editor's first request unanswered; instead it dials again (redial:
// dialOrStart, which starts a daemon when none answers) and sends them
// again. Nothing the daemon answered is ever resent.
func relay(ctx context.Context, conn net.Conn, in io.Reader, out io.Writer, redial func() (net.Conn, error)) error {
	r := &relayState{conn: conn}
	defer func() { r.current().Close() }()
	stop := context.AfterFunc(ctx, func() { r.current().Close() }) // a signal ends the relay
	defer stop()
	go r.up(in)
	for attempt := 0; ; attempt++ {
		err := r.down(out)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil || r.heard.Load() || attempt >= relayRedials || !r.resendable() {
			if errors.Is(err, io.EOF) {
				return errors.New("relay: the daemon closed the connection without answering")
			}
			if err != nil {
				return fmt.Errorf("relay: %w", err)
			}
			return nil
		}
		next, derr := redial()
		if derr != nil {
			return fmt.Errorf("relay: %w (dialling again: %v)", err, derr)
		}
		if err := r.swap(next); err != nil {
			return fmt.Errorf("relay: %w", err)
		}
	}
}

// relayState is what the relay's two directions share. Created by relay;
// lives as long as it.
type relayState struct {
	heard atomic.Bool // the daemon sent a byte: nothing is kept or resent after

	mu   sync.Mutex // guards the fields below; held across writes to conn so a swap resends in order
	conn net.Conn
	kept []byte // the editor's bytes so far, until the daemon answers
	over bool   // more than relayKeep was written before any answer: not resendable
	eof  bool   // the editor closed its side
}

func (r *relayState) current() net.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

func (r *relayState) resendable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.over
}

// up copies the editor's bytes to the daemon. A failed write before the
// daemon answered is left to down's redial, which resends what was kept.
func (r *relayState) up(in io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			r.mu.Lock()
			switch {
			case r.heard.Load():
				r.kept = nil
			case !r.over && len(r.kept)+n > relayKeep:
				r.over, r.kept = true, nil
			case !r.over:
				r.kept = append(r.kept, buf[:n]...)
			}
			_, werr := r.conn.Write(buf[:n])
			stop := werr != nil && (r.heard.Load() || r.over)
			r.mu.Unlock()
			if stop {
				return // the daemon's side ends the relay
			}
		}
		if err != nil {
			r.mu.Lock()
			r.eof = true
			closeWrite(r.conn)
			r.mu.Unlock()
			return
		}
	}
}

// down copies the daemon's bytes to the editor until the connection ends;
// its first byte ends the keeping of the editor's.
func (r *relayState) down(out io.Writer) error {
	conn := r.current()
	buf := make([]byte, 32<<10)
	n, err := conn.Read(buf)
	if n > 0 {
		r.heard.Store(true)
		if _, werr := out.Write(buf[:n]); werr != nil {
			return werr
		}
	}
	if err != nil {
		if errors.Is(err, io.EOF) && r.heard.Load() {
			return nil
		}
		return err
	}
	_, err = io.Copy(out, conn)
	return err
}

// swap makes next the daemon's connection and sends it what the editor
// wrote so far.
func (r *relayState) swap(next net.Conn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conn.Close()
	r.conn = next
	if _, err := next.Write(r.kept); err != nil {
		return err
	}
	if r.eof {
		closeWrite(next)
	}
	return nil
}

// closeWrite tells the daemon the editor will send nothing more.
func closeWrite(c net.Conn) {
	if uc, ok := c.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
}

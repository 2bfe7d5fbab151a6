package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hearthd/hearth/session/sim"
)

// streamWriter keeps what is written to it and says when a write first
// holds want.
type streamWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	once sync.Once
	seen chan struct{}
}

func newStreamWriter(want string) *streamWriter {
	return &streamWriter{want: want, seen: make(chan struct{})}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *streamWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitSeen waits for want to be written.
func (w *streamWriter) waitSeen(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	select {
	case <-w.seen:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no %s; so far:\n%s", what, w.String())
	}
}

// A line piped to ask's stdin while the answer streams steers it: the
// model reads it in the answer (the simulator's successor answers it), ask
// says so, and exits 0.
func TestAskSteersFromStdin(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	cmd := exec.Command(binary, "ask", "slow") // streams for about 10 s
	cmd.Env, cmd.Dir = e.env, e.root
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := newStreamWriter("Streaming slowly"), newStreamWriter("")
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out.waitSeen(t, cmd, "answer streaming")
	io.WriteString(in, "say banana\n")
	in.Close()
	if code := waitExit(t, cmd, 60*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "You said: say banana") {
		t.Errorf("the answer did not take the steering in:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), `hearth: steered: "say banana"`) {
		t.Errorf("ask did not say it steered; stderr:\n%s", errOut.String())
	}
}

// On a terminal, a line typed while the answer streams steers it (an
// answer typed to a permission question stays the question's:
// TestAskAsksOnTerminal runs with the steerer reading the terminal).
func TestAskSteersFromTerminal(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	cmd := exec.Command(binary, "ask", "slow")
	cmd.Env, cmd.Dir = e.env, e.root
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	screen := newStreamWriter("Streaming slowly")
	copied := make(chan struct{})
	go func() { // ends with the pty: EIO once the child is gone
		io.Copy(screen, tty)
		close(copied)
	}()
	screen.waitSeen(t, cmd, "answer streaming")
	io.WriteString(tty, "say banana\n")
	code := waitExit(t, cmd, 60*time.Second)
	tty.Close()
	<-copied
	if code != 0 {
		t.Fatalf("exit %d; terminal:\n%s", code, screen.String())
	}
	if got := screen.String(); !strings.Contains(got, "You said: say banana") || !strings.Contains(got, `hearth: steered: "say banana"`) {
		t.Errorf("the typed line did not steer the answer; terminal:\n%s", got)
	}
}

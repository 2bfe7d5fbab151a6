package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two daemons, two sockets, one data directory: the second refuses to
// start, naming the first's pid and socket, and leaves no socket behind;
// `ask --no-daemon` is refused the same way; the first keeps serving.
func TestSecondDaemonOnOneDataDir(t *testing.T) {
	e := newE2E(t)
	first := e.serve()
	want := fmt.Sprintf("another hearth daemon (pid %d, socket %s) uses the data directory %s", first.Process.Pid, e.sock, dataDir(e))

	other := filepath.Join(filepath.Dir(e.sock), "other.sock")
	second := exec.Command(binary, "serve", "--socket", other)
	second.Env = e.env
	var out bytes.Buffer
	second.Stdout, second.Stderr = &out, &out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, second, 20*time.Second); code != 1 || !strings.Contains(out.String(), want) {
		t.Fatalf("second daemon: exit %d\n%s\nwant it to say %q", code, out.String(), want)
	}
	if _, err := os.Stat(other); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused daemon left its socket: %v", err)
	}

	ask := exec.Command(binary, "ask", "--no-daemon", "--cwd", e.root, "hello")
	ask.Env = e.env
	if b, err := ask.CombinedOutput(); err == nil || !strings.Contains(string(b), want) {
		t.Errorf("ask --no-daemon beside the daemon: %v\n%s", err, b)
	}

	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	if got := newACP(t, conn).turn(t, e.root, "hello"); got == "" {
		t.Error("the first daemon answered nothing")
	}
}

// Asks started together with no daemon each start one; one wins the socket
// and the data directory, the others' daemons exit, and every ask gets its
// answer from the winner.
func TestAsksStartingTogetherShareOneDaemon(t *testing.T) {
	e := newE2E(t)
	defer stopDaemonAt(t, e.sock)
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ask := exec.Command(binary, "ask", "--cwd", e.root, fmt.Sprintf("hello %d", i))
			ask.Env = e.env
			b, err := ask.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("ask %d: %v\n%s", i, err, b)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

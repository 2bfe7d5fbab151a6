package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hearth status, ask and acp check the daemon's socket before they send
// anything: on a socket others can connect to, they connect to nothing,
// say what to fix, and acp starts no daemon in its place.
func TestClientsRefuseSocketOthersCanReach(t *testing.T) {
	e := newE2E(t)
	if err := os.MkdirAll(filepath.Dir(e.sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(e.sock, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"ask", "--cwd", e.root, "hi"}, {"acp"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, binary, args...) // a client that talks to the socket would hang on it
		cmd.Env = e.env
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("hearth %s on a 0666 socket: %v, want a failure\n%s", args[0], err, out)
		}
		if !strings.Contains(string(out), "chmod 600 "+e.sock) || !strings.Contains(string(out), "other users can connect") {
			t.Errorf("hearth %s does not say what to fix:\n%s", args[0], out)
		}
	}
	// Every command has exited: a connection they made would be queued.
	ln.(*net.UnixListener).SetDeadline(time.Now())
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("a client connected to the unsafe socket")
	}
	if _, err := os.Stat(filepath.Join(dataDir(e), "hearth.start.log")); err == nil {
		t.Error("hearth acp started a daemon beside the unsafe socket")
	}
}

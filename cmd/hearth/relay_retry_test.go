package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A daemon killed a moment ago still accepts on its socket while the kernel
// tears it down, then resets what it accepted: a relay started then must
// not die with the editor's first request unanswered (an editor reconnecting
// at once after a crash met it). Here the first connection is reset before
// any byte comes back; the relay dials again and sends what the editor
// wrote so far, and the editor gets its answer.
func TestRelayRetriesADaemonThatResetBeforeAnswering(t *testing.T) {
	e := newE2E(t)
	if err := os.MkdirAll(filepath.Dir(e.sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(e.sock, 0o600)
	served := make(chan string, 1)
	go func() {
		first, err := ln.Accept()
		if err != nil {
			return
		}
		// Once the editor's request reaches us, close with most of it
		// unread: the relay's read of this connection gets ECONNRESET, as
		// from a daemon the kernel tears down.
		first.Read(make([]byte, 1))
		first.Close()
		second, err := ln.Accept()
		if err != nil {
			return
		}
		defer second.Close()
		line, _ := bufio.NewReader(second).ReadString('\n')
		served <- line
		second.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n"))
	}()

	cmd := exec.Command(binary, "acp")
	cmd.Env = e.env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"
	if _, err := stdin.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, `"protocolVersion":1`) {
			t.Fatalf("the editor got %q; relay stderr: %s", line, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer through the relay; its stderr: %s", stderr.String())
	}
	if line := <-served; line != req {
		t.Fatalf("the second connection got %q, want the editor's request again", line)
	}
}

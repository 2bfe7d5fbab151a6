package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// noKey is the environment of a newcomer: no API key, no base URL, so the
// daemon answers from its built-in simulator.
func noKey(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "OPENAI_BASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

// Without a key, plain words drive the simulator: write makes a file
// (through the permission --yes gives), run runs a command, and anything
// else is echoed with a line saying what to try.
func TestAskPlainWordsWithoutKey(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	e.env = noKey(e.env)
	r := e.ask(t, nil, "", "--no-daemon", "--yes", "write notes/x.txt hi there")
	if r.code != 0 {
		t.Fatalf("write: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "notes", "x.txt")); err != nil || string(b) != "hi there\n" {
		t.Errorf("notes/x.txt = %q, %v; stdout %q", b, err, r.stdout)
	}
	if !strings.Contains(r.stdout, "I called write_file 1 time(s)") || !strings.Contains(r.stderr, "built-in simulator") {
		t.Errorf("write: stdout %q stderr %q", r.stdout, r.stderr)
	}

	r = e.ask(t, nil, "", "--no-daemon", "run echo made > made.txt")
	if r.code != exitAskRefused || !strings.Contains(r.stderr, "refused: Run echo made > made.txt") {
		t.Errorf("run without a terminal: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.root, "made.txt")); err == nil {
		t.Error("a refused command ran")
	}

	r = e.ask(t, nil, "", "--no-daemon", "hello")
	if r.code != 0 || !strings.Contains(r.stdout, "You said: hello") || !strings.Contains(r.stdout, "`write notes/x.txt hi`") ||
		!strings.Contains(r.stdout, "`slow`") {
		t.Errorf("echo: exit %d, stdout %q", r.code, r.stdout)
	}
}

// slow streams long enough to be cancelled: Ctrl-C once it has begun
// exits 130 with the answer cut short.
func TestAskSlowCanBeCancelled(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	cmd := exec.Command(binary, "ask", "slow")
	cmd.Env, cmd.Dir = e.env, e.root
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len("Streaming slowly"))
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatal(err)
	}
	rest := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(stdout); rest <- b }() // ends when ask exits
	cmd.Process.Signal(os.Interrupt)
	start := time.Now()
	if code := waitExit(t, cmd, 20*time.Second); code != exitAskCancelled {
		t.Errorf("exit %d after Ctrl-C; stderr:\n%s", code, stderr.String())
	}
	answer := string(first) + string(<-rest)
	if string(first) != "Streaming slowly" || strings.Contains(answer, "Done.") {
		t.Errorf("the answer was not cut short: %q", answer)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ask took %v to end after Ctrl-C", d)
	}
}

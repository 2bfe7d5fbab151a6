//go:build linux && cgo

package sandbox

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// seenOutput collects a process's output and wakes whoever waits for a
// piece of it.
type seenOutput struct {
	mu   sync.Mutex
	text strings.Builder
	wake chan struct{}
}

func newSeenOutput() *seenOutput { return &seenOutput{wake: make(chan struct{}, 1)} }

func (s *seenOutput) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.text.Write(p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// await waits until the output holds want, or fails the test after 20 s
// or when the process ends without it.
func (s *seenOutput) await(t *testing.T, p *Process, want string) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := s.text.String()
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-s.wake:
		case <-p.Done():
			s.mu.Lock()
			got = s.text.String()
			s.mu.Unlock()
			if !strings.Contains(got, want) {
				t.Fatalf("the process ended (%+v) without printing %q: %q", p.Wait(), want, got)
			}
			return
		case <-deadline.C:
			t.Fatalf("no %q in the output: %q", want, got)
		}
	}
}

// TestProcessInCellTalksThroughAPty: python3 -i started in the cell with a
// terminal reads what is written to it and answers; it sees a terminal on
// stdin, and it cannot write outside the workspace.
func TestProcessInCellTalksThroughAPty(t *testing.T) {
	r, _, outside := newTree(t)
	useSandbox(t)
	out := newSeenOutput()
	p, err := Start(Command{Root: r.path, Dir: r.path, Line: "python3 -i -q", Timeout: NoTimeout}, true, out)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	out.await(t, p, ">>> ")
	if _, err := p.Write([]byte("import os, sys; print(6*7, os.isatty(0))\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	out.await(t, p, "42 True")
	if _, err := p.Write([]byte("open("+quote(outside+"/x")+", 'w')\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	out.await(t, p, "Error: [Errno") // refused, or not even there: /tmp is the cell's own
	end := p.Kill()
	if !end.Confined {
		t.Errorf("the process ran unconfined: %+v", end)
	}
}

// TestProcessWithPipes: a process without a terminal reads its stdin from
// a pipe; closing it is not needed for its answer, and its exit is
// reported.
func TestProcessWithPipes(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	out := newSeenOutput()
	p, err := Start(Command{Root: r.path, Dir: r.path, Line: "read a; echo got:$a; exit 3", Timeout: NoTimeout}, false, out)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if _, err := p.Write([]byte("hello\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	out.await(t, p, "got:hello")
	if end := p.Wait(); end.ExitCode != 3 || end.Err != nil {
		t.Errorf("end %+v, want exit code 3", end)
	}
	if _, err := p.Write([]byte("x"), time.Second); err == nil {
		t.Error("a write to an ended process succeeded")
	}
}

// TestProcessKillEndsEverythingFast: Kill ends a process whose children
// ignore SIGTERM within 2 s, and its pid is gone.
func TestProcessKillEndsEverythingFast(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	out := newSeenOutput()
	p, err := Start(Command{Root: r.path, Dir: r.path, Line: "trap '' TERM; (trap '' TERM; sleep 600) & echo ready; wait", Timeout: NoTimeout}, false, out)
	if err != nil {
		t.Fatal(err)
	}
	out.await(t, p, "ready")
	start := time.Now()
	end := p.Kill()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Kill took %v", took)
	}
	if !end.Cancelled {
		t.Errorf("end %+v, want cancelled", end)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// TestProcessPtyWithoutSandbox: with no helper configured the process
// runs as a plain /bin/sh, still with the terminal as its controlling one.
func TestProcessPtyWithoutSandbox(t *testing.T) {
	r, _, _ := newTree(t)
	out := newSeenOutput()
	p, err := Start(Command{Root: r.path, Dir: r.path, Line: "python3 -i -q", Timeout: NoTimeout}, true, out)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if _, err := p.Write([]byte("import os; print(6*7, os.isatty(0), os.getsid(0) == os.getpid())\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	out.await(t, p, "42 True")
	if _, err := p.Write([]byte("exit()\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	if end := p.Wait(); end.ExitCode != 0 || end.Confined {
		t.Errorf("end %+v, want exit 0, unconfined", end)
	}
}

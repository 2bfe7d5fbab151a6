package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"github.com/creack/pty"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// editA asks the simulator's model to overwrite a.txt (the workspace's
// file with "alpha\n").
const editA = `edit sim:calls=1 sim:tool=write_file sim:args={"path":"a.txt","content":"changed\n"}`

// askResult is one `hearth ask` run.
type askResult struct {
	code           int
	stdout, stderr string
}

// newAskEnv is an e2e environment for ask: a.txt in the workspace, a short
// idle exit for the daemon ask starts, and that daemon stopped at the end.
func newAskEnv(t *testing.T, opts sim.Options) *e2eEnv {
	e := newE2EWith(t, opts)
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("alpha\n"), 0o644)
	e.env = append(e.env, "HEARTH_IDLE_EXIT=1m")
	t.Cleanup(func() { stopDaemonAt(t, e.sock) })
	return e
}

// ask runs `hearth ask ARGS` in the workspace with stdin from a pipe
// holding stdin, and waits (bounded) for it to exit.
func (e *e2eEnv) ask(t *testing.T, env []string, stdin string, args ...string) askResult {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"ask"}, args...)...)
	cmd.Env = append(append([]string(nil), e.env...), env...)
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, 60*time.Second)
	return askResult{code, stdout.String(), stderr.String()}
}

func (e *e2eEnv) readA(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// daemonPID is the pid of the daemon on the socket, 0 when none answers.
func (e *e2eEnv) daemonPID(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, e.sock)
	if err != nil {
		return 0
	}
	defer c.Close()
	var st rpc.Status
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	return st.PID
}

// Without a terminal and without --yes, an edit is refused: the file stays,
// stderr shows what was asked (the diff) and how to allow it, the answer
// still comes, and the exit code is 3. The prompt comes from stdin.
func TestAskRefusesWithoutTerminal(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	r := e.ask(t, nil, editA+"\n")
	if r.code != exitAskRefused {
		t.Errorf("exit %d, want %d; stderr:\n%s", r.code, exitAskRefused, r.stderr)
	}
	if got := e.readA(t); got != "alpha\n" {
		t.Errorf("a.txt = %q after a refused edit", got)
	}
	for _, want := range []string{"refused: Write a.txt", "+changed", "-alpha", "--yes", "--mode"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "rejected") || strings.Contains(r.stdout, "--yes") {
		t.Errorf("stdout (the answer) = %q", r.stdout)
	}
	if strings.Contains(r.stderr+r.stdout, "method not found") {
		t.Errorf("the permission call was not answered:\n%s", r.stderr)
	}
}

// --yes allows what is asked: the edit lands, exit 0. `hearth ask -` reads
// the prompt from stdin.
func TestAskYesAllows(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	r := e.ask(t, nil, editA, "--yes", "-")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if got := e.readA(t); got != "changed\n" {
		t.Errorf("a.txt = %q", got)
	}
	if !strings.Contains(r.stderr, "allowed (--yes): Write a.txt") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// --mode sets the session's mode before the prompt: full-auto runs a
// command without asking, read-only refuses an edit without asking (the
// user chose it: exit 0). A mode that does not exist is a usage error.
func TestAskMode(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	r := e.ask(t, nil, "", "--mode", "full-auto", `run sim:calls=1 sim:tool=shell sim:args={"command":"date>made.txt"}`)
	if r.code != 0 || strings.Contains(r.stderr, "refused") {
		t.Fatalf("full-auto: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.root, "made.txt")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	r = e.ask(t, nil, "", "--mode", "read-only", editA)
	if r.code != 0 || e.readA(t) != "alpha\n" || !strings.Contains(r.stdout, "read-only") {
		t.Errorf("read-only: exit %d, a.txt %q; stdout %q stderr:\n%s", r.code, e.readA(t), r.stdout, r.stderr)
	}
	r = e.ask(t, nil, "", "--mode", "yolo", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "full-auto") {
		t.Errorf("--mode yolo: exit %d: %s", r.code, r.stderr)
	}
}

// askOnTerminal runs `hearth ask ARGS` on a pty, types answer once it asks
// "Allow?", and returns everything the terminal received and the exit code.
func (e *e2eEnv) askOnTerminal(t *testing.T, answer string, args ...string) (string, int) {
	t.Helper()
	return e.onTerminal(t, "Allow?", answer, append([]string{"ask"}, args...)...)
}

// onTerminal runs `hearth ARGS` on a pty (its stdin, stdout, stderr and
// controlling terminal), types answer and a newline once the terminal shows
// prompt, and returns everything the terminal received and the exit code.
func (e *e2eEnv) onTerminal(t *testing.T, prompt, answer string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env, cmd.Dir = e.env, e.root
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := make(chan string, 1)
	asked := make(chan struct{})
	go func() { // ends with the pty: EIO once the child is gone, or the deferred Close
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		once := false
		for {
			n, err := tty.Read(buf)
			seen.Write(buf[:n])
			if !once && strings.Contains(seen.String(), prompt) {
				once = true
				close(asked)
			}
			if err != nil {
				out <- seen.String()
				return
			}
		}
	}()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("hearth %s never asked %q; terminal:\n%s", args[0], prompt, <-out)
	}
	io.WriteString(tty, answer+"\n")
	code := waitExit(t, cmd, 30*time.Second)
	tty.Close()
	return <-out, code
}

// On a terminal (a pty here) ask asks y/N on stderr, showing the diff; y
// lets the edit land, anything else refuses it; both exit 0.
func TestAskAsksOnTerminal(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	run := func(answer string) string {
		t.Helper()
		screen, code := e.askOnTerminal(t, answer, editA)
		if code != 0 {
			t.Errorf("answer %q: exit %d", answer, code)
		}
		return screen
	}
	screen := run("y")
	if got := e.readA(t); got != "changed\n" {
		t.Errorf("after y: a.txt = %q; terminal:\n%s", got, screen)
	}
	if !strings.Contains(screen, "+changed") || !strings.Contains(screen, "Write a.txt") {
		t.Errorf("the question did not show the diff:\n%s", screen)
	}
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("alpha\n"), 0o644)
	screen = run("")
	if got := e.readA(t); got != "alpha\n" {
		t.Errorf("after the default answer (no): a.txt = %q; terminal:\n%s", got, screen)
	}
}

// Ctrl-C cancels the turn and exits 130 at once.
func TestAskInterruptExits130(t *testing.T) {
	e := newAskEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 200}})
	cmd := exec.Command(binary, "ask", "talk sim:tokens=100000")
	cmd.Env, cmd.Dir = e.env, e.root
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdout) // ends when ask exits
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 20*time.Second); code != exitAskCancelled {
		t.Errorf("exit %d after Ctrl-C; stderr:\n%s", code, stderr.String())
	}
}

// A turn that fails exits 1 with the reason: a model that stopped short
// (the token limit) says so; a rejected key names OPENAI_API_KEY and is no
// "internal error".
func TestAskFailedTurnExits1(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultResponseIncomplete, Match: func(r sim.Received) bool {
		return r.Generate == nil || *r.Generate
	}})
	if r := e.ask(t, nil, "", "talk sim:tokens=50"); r.code != 1 || !strings.Contains(r.stderr, "max_tokens") {
		t.Errorf("a response cut at the token limit: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	stopDaemonAt(t, e.sock) // the next ask starts one with the wrong key
	r := e.ask(t, []string{"OPENAI_API_KEY=sk-not-the-right-one"}, "", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || strings.Contains(r.stderr, "internal error") {
		t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "sk-not-the-right-one") {
		t.Errorf("the key was printed:\n%s", r.stderr)
	}
}

// A base URL hearth cannot use fails at once, naming the variable and the
// fix, before any daemon starts.
func TestAskBadBaseURL(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	for _, base := range []string{"not a url", "ftp://example.com/v1"} {
		r := e.ask(t, []string{"OPENAI_BASE_URL=" + base}, "", "hi")
		if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_BASE_URL") || !strings.Contains(r.stderr, "https://api.openai.com/v1") ||
			strings.Contains(r.stderr, "internal error") {
			t.Errorf("OPENAI_BASE_URL=%q: exit %d; stderr:\n%s", base, r.code, r.stderr)
		}
		if _, err := os.Stat(e.sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("OPENAI_BASE_URL=%q: a daemon was started (%v)", base, err)
		}
	}
	// The daemon itself refuses it at start, with the same words, so an
	// editor's `hearth acp` shows them.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve") // a daemon that accepts the URL would run until killed
	cmd.Env = append(append([]string(nil), e.env...), "OPENAI_BASE_URL=ftp://example.com/v1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "OPENAI_BASE_URL") {
		t.Errorf("serve with an ftp base: %v %s", err, out)
	}
	if ctx.Err() != nil {
		t.Error("serve with an ftp base ran instead of refusing it")
	}
}

// The HTTP fallback notice goes to stderr, never into the answer on stdout.
func TestAskNoticeOnStderr(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
	r := e.ask(t, nil, "", "hi there")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "HTTP") || !strings.Contains(r.stdout, "hi there") {
		t.Errorf("stdout = %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "HTTP streaming") {
		t.Errorf("stderr lacks the notice:\n%s", r.stderr)
	}
}

// ask starts the daemon when none runs and leaves it running, so the second
// ask in the workspace finds it warm: same daemon, no new handshake.
// --no-daemon runs in process and leaves nothing behind.
func TestAskIsWarmTheSecondTime(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	if r := e.ask(t, nil, "", "one"); r.code != 0 {
		t.Fatalf("first ask: exit %d: %s", r.code, r.stderr)
	}
	pid := e.daemonPID(t)
	if pid == 0 {
		t.Fatal("no daemon runs after the first ask")
	}
	if r := e.ask(t, nil, "", "two"); r.code != 0 || !strings.Contains(r.stdout, "two") {
		t.Fatalf("second ask: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if again := e.daemonPID(t); again != pid {
		t.Errorf("the second ask used daemon %d, the first %d", again, pid)
	}
	if n := e.sim.Handshakes(); n != 1 {
		t.Errorf("%d WebSocket handshakes for two asks in one workspace, want 1", n)
	}

	stopDaemonAt(t, e.sock)
	r := e.ask(t, nil, "", "--no-daemon", "three")
	if r.code != 0 || !strings.Contains(r.stdout, "three") {
		t.Fatalf("--no-daemon: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if e.daemonPID(t) != 0 {
		t.Error("--no-daemon left a daemon running")
	}
}

// ask says when the running daemon's settings differ from the shell's
// (model, key) without printing either key, and how to start one with the
// shell's.
func TestAskSaysWhenTheDaemonDiffers(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	if r := e.ask(t, nil, "", "one"); r.code != 0 || strings.Contains(r.stderr, "other settings") {
		t.Fatalf("first ask: exit %d: %s", r.code, r.stderr)
	}
	r := e.ask(t, []string{"HEARTH_MODEL=other-model", "OPENAI_API_KEY=sk-another-key-0000"}, "", "two")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"other settings", "other-model", "OPENAI_API_KEY", "hearth stop"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// Not --no-daemon: beside the daemon, on its data directory, it is refused.
	if strings.Contains(r.stderr, "--no-daemon") {
		t.Errorf("ask suggests --no-daemon beside the running daemon:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "sk-another-key-0000") || strings.Contains(r.stderr, "sk-e2e") {
		t.Errorf("a key was printed:\n%s", r.stderr)
	}
}

// The agent's plan (update_plan) is shown on stderr as a checklist, apart
// from the answer on stdout; making it asks nothing.
func TestAskShowsThePlan(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	r := e.ask(t, nil, "", "plan read a.txt; fix it")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "plan:\n  [~] read a.txt\n  [ ] fix it\n") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "[~]") || !strings.Contains(r.stdout, "Plan updated") {
		t.Errorf("stdout (the answer) = %q", r.stdout)
	}
}

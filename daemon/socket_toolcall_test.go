//go:build linux

package daemon

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// shellPrompt is a prompt whose scripted model runs command with the shell
// tool.
func shellPrompt(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	return "run sim:calls=1 sim:tool=shell sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)
}

// A command the model runs cannot drive the daemon: its connection to the
// socket is closed before any method runs — in ask mode with the call
// approved (the network on, no namespace: the daemon's check of the peer's
// ancestry alone), in full-auto, and from a process that left the command's
// session and process group (setsid, double fork). The editor's own
// connection, and a new one from outside any call, keep their answers.
func TestToolCallCannotDriveDaemon(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	// The socket is let through the sandbox's mounts (as HEARTH_SANDBOX_SOCKETS
	// would), so that the daemon's own check is what refuses the calls.
	useSandboxHelper(t, td.cfg.Socket)
	a := &asker{answers: []string{"allow_once", "allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := mustCommandExe(t) + " " + acpProbeSubcommand + " " + td.cfg.Socket
	fifo := filepath.Join(td.root, "out") // where commands see it: their /tmp is their own
	detached := "mkfifo " + fifo + " && (setsid " + probe + " >" + fifo + " &) && cat " + fifo
	for i, c := range []struct{ mode, command string }{
		{ModeAsk, probe},
		{ModeAsk, detached},
		{ModeFullAuto, probe},
		{ModeFullAuto, detached},
	} {
		os.Remove(fifo)
		ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(c.mode)}, nil)
		if stop := ed.prompt(id, shellPrompt(t, c.command)); stop != acp.StopReasonEndTurn {
			t.Fatalf("%s, %q: stop %s", c.mode, c.command, stop)
		}
		if out := lastToolOutput(t, td); !strings.HasPrefix(commandOutput(out), "refused: ") {
			t.Errorf("%s, %q: the command's connection got %q", c.mode, c.command, out)
		}
		if n := td.d.admission.refusedCalls.Load(); n != int64(i+1) {
			t.Errorf("%s, %q: %d connections refused as a tool call's, want %d", c.mode, c.command, n, i+1)
		}
	}
	if a.asked() != 2 {
		t.Errorf("the editor was asked %d times, want 2 (the ask-mode calls)", a.asked())
	}

	// While a command runs, a client outside it is served: a process the
	// test starts, whose ancestry holds no call.
	block := filepath.Join(td.root, "block")
	if err := syscall.Mkfifo(block, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	catBlock := acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(shellPrompt(t, "cat "+block))}}
	go func() { done <- ed.call(rpc.MethodSessionPrompt, catBlock, nil) }()
	w := openWhenRead(t, block, done) // the command has opened it: the call runs
	if len(sandbox.CallPIDs()) == 0 {
		t.Errorf("no call runs: the command's cell (or helper) is not recorded")
	}
	out, err := exec.Command(exe, acpProbeSubcommand, td.cfg.Socket).Output()
	if !strings.HasPrefix(string(out), "answered: ") {
		t.Errorf("a client outside the running call: %q %v", out, err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	other := td.connect()
	other.initialize()
	if n := td.d.admission.refusedCalls.Load(); n != 4 {
		t.Errorf("%d connections refused, want the 4 the calls made", n)
	}
}

// Where the network is off and user namespaces work, the command does not
// even find the socket: the sandbox hides it (sandbox.Config.Socket),
// a wall of its own — the daemon sees no connection to refuse.
func TestToolCallFindsNoSocket(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandbox.Set(sandbox.Config{Helper: []string{exe, sandboxSubcommand}, Socket: td.cfg.Socket})
	t.Cleanup(func() { sandbox.Set(sandbox.Config{}) })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, shellPrompt(t, mustCommandExe(t)+" "+acpProbeSubcommand+" "+td.cfg.Socket))
	out := lastToolOutput(t, td)
	status := sandbox.NetworkStatus()
	if !strings.Contains(status, "empty network namespace") {
		// No namespaces here: the daemon's own check is the wall.
		if n := td.d.admission.refusedCalls.Load(); !strings.HasPrefix(commandOutput(out), "refused: ") || n != 1 {
			t.Errorf("no namespaces (%s): the command's connection got %q, the daemon refused %d", status, out, n)
		}
		return
	}
	// The socket's directory is covered: empty, or (the command holding no
	// capability) not even searchable.
	hidden := "refused: dial unix " + td.cfg.Socket + ": connect: "
	if out := commandOutput(out); !strings.HasPrefix(out, hidden+"no such file or directory") && !strings.HasPrefix(out, hidden+"permission denied") {
		t.Errorf("the full-auto command found the socket: %q", out)
	}
	if n := td.d.admission.refusedCalls.Load(); n != 0 {
		t.Errorf("the daemon refused %d connections: the socket was not hidden", n)
	}
}

// While a call runs, a connection whose process cannot be checked is
// refused: its process exited before the daemon read its ancestry (its pid
// may name another process by then). A live process outside the calls
// passes.
func TestCallPeerFailsClosed(t *testing.T) {
	runningCall(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The probe connects and waits for an answer it never gets: alive.
	live := exec.Command(exe, acpProbeSubcommand, path)
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if leader, err := callPeer(c); leader != 0 || err != nil {
		t.Errorf("a live process outside the calls: call %d, %v", leader, err)
	}
	c.Close()
	live.Wait()

	// This one has exited (and been reaped) before the check.
	gone := exec.Command(exe, acpProbeSubcommand, path)
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	c, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gone.Process.Kill()
	gone.Wait()
	if leader, err := callPeer(c); err == nil {
		t.Errorf("a process gone before the check: call %d, no error; want it refused", leader)
	} else {
		t.Logf("refused: %v", err)
	}
}

// runningCall runs a shell call (plain /bin/sh, no helper) that blocks
// until the test ends: sandbox.CallPIDs holds it meanwhile.
func runningCall(tb testing.TB) {
	tb.Helper()
	dir := tb.TempDir()
	root, err := workspace.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	block := filepath.Join(dir, "block")
	if err := syscall.Mkfifo(block, 0o600); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		args, _ := json.Marshal(map[string]string{"command": "cat " + block})
		workspace.NewToolset(root).Run(context.Background(), "shell", args)
	}()
	w, err := os.OpenFile(block, os.O_WRONLY, 0) // returns once cat has opened it: the call runs
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close(); <-done; root.Close() })
	if len(sandbox.CallPIDs()) != 1 {
		tb.Fatalf("calls running: %v, want one", sandbox.CallPIDs())
	}
}

// BenchmarkCallPeer is the check admit makes of each connection while a
// call runs: the peer's pid and pidfd, the walk up its ancestry in /proc,
// the pidfd's liveness.
//
//	go test -run '^$' -bench CallPeer ./daemon/
func BenchmarkCallPeer(b *testing.B) {
	runningCall(b)
	path := filepath.Join(b.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	probe := exec.Command(exe, acpProbeSubcommand, path)
	if err := probe.Start(); err != nil {
		b.Fatal(err)
	}
	c, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { c.Close(); probe.Wait() }()
	for b.Loop() {
		if leader, err := callPeer(c); leader != 0 || err != nil {
			b.Fatalf("call %d, %v", leader, err)
		}
	}
}

// openWhenRead opens the FIFO path for writing, which returns once a
// command has opened it for reading. It fails the test when the prompt that
// should run that command ends first (done: the command failed) or after a
// minute, instead of waiting for ever.
func openWhenRead(t *testing.T, path string, done chan error) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			w = nil
		}
		opened <- w
	}()
	unblock := func() { // a reader of our own lets the open return
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if w := <-opened; w != nil {
				w.Close()
			}
			r.Close()
		}
	}
	select {
	case w := <-opened:
		if w == nil {
			t.Fatalf("cannot open %s", path)
		}
		return w
	case err := <-done:
		unblock()
		t.Fatalf("the prompt ended before its command opened %s: %v", path, err)
	case <-time.After(time.Minute):
		unblock()
		t.Fatalf("no command opened %s within a minute", path)
	}
	return nil
}

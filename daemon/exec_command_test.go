//go:build linux

package daemon

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// pidsRunning are the host's pids whose command line is argv, its first
// word as a path's last element (a shim may run the program by its path).
func pidsRunning(t *testing.T, argv ...string) []int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	dir, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && (string(b) == want || strings.HasSuffix(string(b), "/"+want)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// liveText reports whether an update showed a call's output as it ran:
// content with want that is not a finished result.
func liveText(ups []acp.SessionUpdate, want string) bool {
	for _, u := range ups {
		if u.ToolCallUpdate == nil {
			continue
		}
		for _, c := range u.ToolCallUpdate.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				if text := c.Content.Content.Text.Text; strings.Contains(text, want) && !strings.Contains(text, "Chunk ID:") {
					return true
				}
			}
		}
	}
	return false
}

// A codex-family session offers exec_command and write_stdin, not shell.
// The model starts python3 -i with a terminal in the sandbox (asked about
// once, in ask mode), writes print(6*7) to it and reads 42; the editor
// sees the output while it comes; _hearth/processes lists the REPL, and
// closing the session ends it: its pid is gone. Every request is valid
// under the official schema.
func TestExecCommandPythonREPL(t *testing.T) {
	useSandboxHelper(t)
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	marker := fmt.Sprintf("repl_%d", time.Now().UnixNano())
	prompt := `sim:steps=[["exec_command",{"cmd":"python3\u0020-i\u0020-q\u0020-X\u0020` + marker + `","tty":true,"yield_time_ms":1000}],` +
		`["write_stdin",{"session_id":"$session","chars":"print(6*7)\n","yield_time_ms":3000}]]`
	if stop := ed.prompt(id, prompt); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if got := agentText(ed.updates()); !strings.Contains(got, "Process running with session ID") || !strings.Contains(got, "42\r\n") {
		t.Fatalf("the model read %q", got)
	}
	if a.asked() != 1 || a.seen[0].ToolCall.Title == nil || !strings.Contains(*a.seen[0].ToolCall.Title, "python3 -i") {
		t.Errorf("asked %d times: %+v", a.asked(), a.seen)
	}
	if !liveText(ed.updates(), "42") {
		t.Error("the editor did not see the output while it came")
	}
	tools := toolTypes(t, td.sim.Received()[0])
	if tools["exec_command"] != "function" || tools["write_stdin"] != "function" || tools["shell"] != "" {
		t.Errorf("tools offered %v", tools)
	}
	checkRequestsValid(t, td)

	var list rpc.ProcessesResult
	ed.must(rpc.MethodHearthProcesses, rpc.ProcessesParams{SessionID: string(id)}, &list)
	if len(list.Processes) != 1 || !list.Processes[0].TTY || !list.Processes[0].Running || !strings.HasPrefix(list.Processes[0].Command, "python3 -i") {
		t.Fatalf("processes %+v", list)
	}
	pids := pidsRunning(t, "python3", "-i", "-q", "-X", marker)
	if len(pids) != 1 {
		t.Fatalf("python3 runs as %v", pids)
	}
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	if left := pidsRunning(t, "python3", "-i", "-q", "-X", marker); len(left) != 0 {
		t.Errorf("python3 outlived its session: %v", left)
	}
}

// The editor ends a session's process with _hearth/process/kill; a wrong
// id is an error, never a crash, and so is the model's write_stdin to a
// process that is not there.
func TestProcessKillAndBadSessionID(t *testing.T) {
	useSandboxHelper(t)
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, `sim:steps=[["exec_command",{"cmd":"exec\u0020sleep\u0020600","yield_time_ms":250}]]`)
	var list rpc.ProcessesResult
	ed.must(rpc.MethodHearthProcesses, rpc.ProcessesParams{SessionID: string(id)}, &list)
	if len(list.Processes) != 1 {
		t.Fatalf("processes %+v", list)
	}
	pid := list.Processes[0].ProcessID
	if err := ed.call(rpc.MethodHearthProcessKill, rpc.ProcessKillParams{SessionID: string(id), ProcessID: pid + 1}, nil); err == nil {
		t.Error("killing a process that is not there succeeded")
	}
	var killed rpc.ProcessKillResult
	ed.must(rpc.MethodHearthProcessKill, rpc.ProcessKillParams{SessionID: string(id), ProcessID: pid}, &killed)
	if !killed.Killed {
		t.Errorf("kill answered %+v", killed)
	}
	ed.must(rpc.MethodHearthProcesses, rpc.ProcessesParams{SessionID: string(id)}, &list)
	if len(list.Processes) != 0 {
		t.Errorf("processes after kill %+v", list)
	}
	ed.forget()
	ed.prompt(id, fmt.Sprintf(`sim:steps=[["write_stdin",{"session_id":%d,"chars":"x"}],["write_stdin",{"session_id":-3,"yield_time_ms":-1}]]`, pid))
	if got := agentText(ed.updates()); !strings.Contains(got, "session_id must be") {
		t.Errorf("the model read %q", got)
	}
	if outs := toolOutputs(ed.updates()); !strings.Contains(outs, fmt.Sprintf("no process with session ID %d", pid)) {
		t.Errorf("outputs %q", outs)
	}
}

// Cancelling the turn ends a running exec_command, and its process,
// within 2 s.
func TestExecCommandCancelledFast(t *testing.T) {
	useSandboxHelper(t)
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	done := make(chan acp.StopReason, 1)
	go func() {
		var r acp.PromptResponse
		ed.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(
			`sim:steps=[["exec_command",{"cmd":"trap\u0020''\u0020TERM;\u0020echo\u0020ready;\u0020sleep\u0020600","yield_time_ms":30000}]]`)}}, &r)
		done <- r.StopReason
	}()
	ed.waitFor("the command's live output", func(ups []acp.SessionUpdate) bool { return liveText(ups, "ready") })
	cancelled := time.Now()
	if err := ed.c.Notify(context.Background(), rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopReasonCancelled {
		t.Errorf("stop %s", stop)
	}
	if took := time.Since(cancelled); took > 2*time.Second {
		t.Errorf("the turn took %v to end after cancel", took)
	}
	var list rpc.ProcessesResult
	ed.must(rpc.MethodHearthProcesses, rpc.ProcessesParams{SessionID: string(id)}, &list)
	if len(list.Processes) != 0 {
		t.Errorf("processes after cancel %+v", list)
	}
}

// A process exec_command left running ends when the daemon stops.
func TestExecCommandEndsWithTheDaemon(t *testing.T) {
	useSandboxHelper(t)
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	marker := fmt.Sprintf("stop_%d", time.Now().UnixNano())
	ed.prompt(id, `sim:steps=[["exec_command",{"cmd":"python3\u0020-q\u0020-X\u0020`+marker+`","tty":true,"yield_time_ms":250}],`+
		`["write_stdin",{"session_id":"$session","chars":"print(6*7)\n","yield_time_ms":3000}]]`)
	if got := agentText(ed.updates()); !strings.Contains(got, "42\r\n") { // python3 itself runs now
		t.Fatalf("the model read %q", got)
	}
	if pids := pidsRunning(t, "python3", "-q", "-X", marker); len(pids) != 1 {
		t.Fatalf("python3 runs as %v", pids)
	}
	if err := td.d.Close(); err != nil {
		t.Fatal(err)
	}
	if left := pidsRunning(t, "python3", "-q", "-X", marker); len(left) != 0 {
		t.Errorf("python3 outlived the daemon: %v", left)
	}
}

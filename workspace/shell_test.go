//go:build linux

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// runShell runs the shell tool with command and an optional timeout.
func runShell(t *testing.T, ts *Toolset, command string, timeoutMS int) Result {
	t.Helper()
	args := map[string]any{"command": command}
	if timeoutMS > 0 {
		args["timeout_ms"] = timeoutMS
	}
	return call(t, ts, "shell", mustJSON(t, args))
}

// pids returns the numbers the command printed as name=pid, by name.
func pids(t *testing.T, output string, names ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range names {
		m := regexp.MustCompile(`(?m)^` + name + `=(\d+)$`).FindStringSubmatch(output)
		if m == nil {
			t.Fatalf("output does not show %s=<pid>:\n%s", name, output)
		}
		out[name], _ = strconv.Atoi(m[1])
	}
	return out
}

// assertGone fails unless every process can no longer run: it has no /proc
// entry, or is a zombie waiting for its new parent to reap it, or is inside
// the kernel's exit path (PF_EXITING: SIGKILL was taken and it will never
// return to user space), or has a SIGKILL pending. The kernel finishes an
// exit asynchronously after kill(2) returns; the last two states are that
// window, and nothing can bring such a process back.
func assertGone(t *testing.T, procs map[string]int) {
	t.Helper()
	const pfExiting = 0x4
	for name, pid := range procs {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Errorf("%s (pid %d): %v", name, pid, err)
			continue
		}
		// After the parenthesised command name: state ppid pgrp session
		// tty_nr tpgid flags ...
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 7 {
			t.Errorf("%s (pid %d): cannot parse %q", name, pid, stat)
			continue
		}
		flags, _ := strconv.ParseUint(fields[6], 10, 64)
		if fields[0] == "Z" || fields[0] == "X" || flags&pfExiting != 0 || killPending(pid) {
			continue
		}
		t.Errorf("%s (pid %d) is still running after the call returned: %s", name, pid, stat)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// killPending reports whether SIGKILL is pending for pid, per
// /proc/pid/status (SigPnd for the thread, ShdPnd for the process).
func killPending(pid int) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, mask, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && m&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

// withoutWall is a shell result with its wall time, which varies, as "T".
func withoutWall(out string) string {
	return wallTime.ReplaceAllString(out, "${1}T seconds\n")
}

var wallTime = regexp.MustCompile(`(?m)^(Wall time: )[0-9.]+ seconds\n`)

// reported is what the model reads of a command that ended with code and
// printed output, its wall time shown as "T".
func reported(code int, output string) string {
	return fmt.Sprintf("Exit code: %d\nWall time: T seconds\nOutput:\n%s", code, output)
}

func TestShellOutputAndExitCode(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	tests := []struct {
		command, want string
		isError       bool
	}{
		{"echo out; echo err >&2; exit 3", reported(3, "out\nerr\n"), true},
		{"printf 'no newline'", reported(0, "no newline\n"), false},
		{"true", reported(0, ""), false},
		{"cat; echo stdin was empty", reported(0, "stdin was empty\n"), false},
		{"kill -KILL $$", reported(137, "[killed by signal: killed]"), true},
		{"printf 'caf\\351\\n'", reported(0, "caf\uFFFD\n"), false},
	}
	for _, tt := range tests {
		res := runShell(t, ts, tt.command, 0)
		if withoutWall(res.Output) != tt.want || res.IsError != tt.isError {
			t.Errorf("shell %q = %+v, want output %q, IsError %v", tt.command, res, tt.want, tt.isError)
		}
	}
	res := runShell(t, ts, "no-such-command-hearth", 0)
	if !res.IsError || !strings.Contains(res.Output, "not found") || !strings.HasPrefix(res.Output, "Exit code: 127\n") {
		t.Errorf("shell of a missing command = %+v", res)
	}
	if res.Title != "Run no-such-command-hearth" {
		t.Errorf("Title = %q", res.Title)
	}
}

func TestShellRunsInRoot(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "here.txt"), "found me\n")
	res := runShell(t, NewToolset(r), "pwd; cat here.txt", 0)
	if want := reported(0, root+"\nfound me\n"); res.IsError || withoutWall(res.Output) != want {
		t.Errorf("shell pwd = %q, want %q", res.Output, want)
	}
}

// TestShellToolEnvironment: a command sees only the allowlisted variables
// and those HEARTH_TOOL_ENV names; credentials under any name stay out.
func TestShellToolEnvironment(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY":  "hearth-test-value-1",
		"DATABASE_URL":    "postgres://u:hearth-test-value-2@h/db",
		"HTTPS_PROXY":     "http://u:hearth-test-value-3@proxy:3128",
		"GITHUB_TOKEN":    "hearth-test-value-4",
		"HEARTH_INTERNAL": "hearth-test-value-5",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("PLAIN_SETTING", "visible-value")
	t.Setenv("OTHER_SETTING", "invisible-value")
	t.Setenv("HEARTH_TOOL_ENV", "PLAIN_SETTING")
	r, _, _ := newTree(t)
	res := runShell(t, NewToolset(r), "env", 0)
	if res.IsError {
		t.Fatalf("shell env = %+v", res)
	}
	for k, v := range secrets {
		if strings.Contains(res.Output, v) || strings.Contains(res.Output, k+"=") {
			t.Errorf("the shell sees %s", k)
		}
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH") + "\n", "HOME=" + os.Getenv("HOME") + "\n", "PLAIN_SETTING=visible-value\n"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("the shell does not see %q", want)
		}
	}
	if strings.Contains(res.Output, "OTHER_SETTING") {
		t.Error("the shell sees a variable that is neither allowlisted nor in HEARTH_TOOL_ENV")
	}
}

func TestShellOutputCap(t *testing.T) {
	r, _, _ := newTree(t)
	// 20000 lines of 5 bytes: 100000 bytes, of which 16 KiB from each end are kept.
	res := runShell(t, NewToolset(r), "yes line | head -n 20000", 0)
	want := "Exit code: 0\nWall time: T seconds\nOriginal token count: 25000\nOutput:\n" +
		strings.Repeat("line\n", 3276) + "line" +
		"\n[... 67232 bytes omitted ...]\n" +
		"ine\n" + strings.Repeat("line\n", 3276)
	if res.IsError || withoutWall(res.Output) != want {
		t.Errorf("shell with 100000 bytes of output: %d bytes, head %q, middle %q", len(res.Output), res.Output[:100], res.Output[16420:16480])
	}
}

// TestShellTimeoutKillsGroup starts children and grandchildren, lets the
// timeout pass, and checks every one is gone when the call returns.
func TestShellTimeoutKillsGroup(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	res := runShell(t, ts, "sleep 1000 & echo a=$!; (sleep 1000 & echo b=$!; wait) & echo sh=$$; wait", 1000)
	if !res.IsError || !strings.HasSuffix(res.Output, "[killed after timeout of 1000 ms]") {
		t.Fatalf("shell past its timeout = %+v", res)
	}
	assertGone(t, pids(t, res.Output, "a", "b", "sh"))
}

// TestShellKillsIgnoringTerm: a child that ignores SIGTERM and keeps the
// output open gets SIGKILL after the grace period. The command waits, over
// a FIFO, until the child has set its trap, then exits.
func TestShellKillsIgnoringTerm(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	start := time.Now()
	res := runShell(t, ts, `mkfifo ready; sh -c 'trap "" TERM; echo > ready; exec sleep 1000' & read x < ready; echo stubborn=$!`, 0)
	if res.IsError || !strings.HasPrefix(res.Output, "Exit code: 0\n") {
		t.Fatalf("shell = %+v", res)
	}
	assertGone(t, pids(t, res.Output, "stubborn"))
	if d := time.Since(start); d < sandbox.KillGrace {
		t.Errorf("the call took %v; the child ignoring SIGTERM should have had the %v grace period", d, sandbox.KillGrace)
	}
}

// TestShellKillsBackgroundOnExit: what the command leaves running is killed
// when its shell exits, and the call does not wait for it.
func TestShellKillsBackgroundOnExit(t *testing.T) {
	r, _, _ := newTree(t)
	res := runShell(t, NewToolset(r), "sleep 1000 & echo bg=$!; echo done", 0)
	if res.IsError || !strings.HasPrefix(res.Output, "Exit code: 0\n") || !strings.HasSuffix(res.Output, "done\n") {
		t.Fatalf("shell = %+v", res)
	}
	assertGone(t, pids(t, res.Output, "bg"))
}

// TestShellCancelKillsGroup cancels the call once the command reports, over
// a FIFO, that its child is running.
func TestShellCancelKillsGroup(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- ts.Run(ctx, "shell", []byte(mustJSON(t, map[string]string{
			"command": "sleep 1000 & { echo child=$!; echo sh=$$; } > " + fifo + "; wait",
		})))
	}()
	started := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // returns when the command has written and closed it
		started <- string(b)
	}()
	var child string
	select {
	case child = <-started:
	case res := <-done:
		// The command never wrote: unblock the reader, then fail.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-started
		t.Fatalf("shell returned before it started its child: %+v", res)
	}
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("shell did not return after its context was cancelled")
	}
	if !res.IsError || !strings.HasSuffix(res.Output, "[cancelled]") {
		t.Fatalf("cancelled shell = %+v", res)
	}
	procs := pids(t, child, "child", "sh")
	assertGone(t, procs)
}

// TestShellEscapedProcess: a process that leaves the group (setsid) cannot
// be killed with it; if it keeps the output open, the call still returns
// and says why the output may be incomplete.
func TestShellEscapedProcess(t *testing.T) {
	r, _, _ := newTree(t)
	res := runShell(t, NewToolset(r), `mkfifo ready; setsid sh -c 'echo > ready; exec sleep 1000' & read x < ready; echo escaped=$!`, 0)
	p := pids(t, res.Output, "escaped")
	t.Cleanup(func() { syscall.Kill(p["escaped"], syscall.SIGKILL) })
	if !strings.HasPrefix(res.Output, "Exit code: 0\n") || !strings.HasSuffix(res.Output, "kept the output open; stopped reading]\n") {
		t.Errorf("shell with an escaped process = %+v", res)
	}
}

func TestShellBadArguments(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	tests := []struct{ args, want string }{
		{`{"command":""}`, "command is empty"},
		{`{"command":"  \n"}`, "command is empty"},
		{`{"command":"true","timeout_ms":0}`, "timeout_ms must be between 1 and 600000 (10 minutes), not 0"},
		{`{"command":"true","timeout_ms":600001}`, "timeout_ms must be between 1 and 600000 (10 minutes), not 600001"},
		{`{"command":"true","timeout_ms":"5000"}`, `"timeout_ms" of shell must be an integer, not string`},
		{`{"command":"true","timeout_ms":1.5}`, `"timeout_ms" of shell must be an integer`},
		{`{"command":["ls"]}`, `"command" of shell must be a string, not array`},
		{`{"cmd":"ls"}`, `unknown argument "cmd" for shell; allowed arguments: command, timeout_ms`},
	}
	for _, tt := range tests {
		res := call(t, ts, "shell", tt.args)
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("shell %s = %+v, want an error containing %q", tt.args, res, tt.want)
		}
	}
}

func TestShellCannotStart(t *testing.T) {
	r, root, _ := newTree(t)
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	res := runShell(t, NewToolset(r), "echo hi", 0)
	if !res.IsError || !strings.HasPrefix(res.Output, "cannot run the command: ") || res.Title != "Run echo hi" {
		t.Errorf("shell in a removed workspace = %+v", res)
	}
}

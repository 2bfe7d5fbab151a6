package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// assertReaped fails unless each process is gone entirely: no /proc entry,
// not even a zombie (the helper reaps what it kills before it exits), or
// its pid already reused by something that is not the command's sleep.
func assertReaped(t *testing.T, procs map[string]int) {
	t.Helper()
	for name, pid := range procs {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if strings.Contains(string(cmdline), "sleep\x0045") || err != nil {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			t.Errorf("%s (pid %d) outlived the call: %s", name, pid, stat)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestSandboxNoOrphans: processes that leave the call's process group
// (setsid -f), are double-forked, or ignore SIGTERM as well, are all gone —
// killed and reaped — when the shell tool returns. Each reports its pid
// over a FIFO before the shell exits.
func TestSandboxNoOrphans(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	command := `mkfifo f1 f2 f3 f4
setsid -f sh -c 'echo setsid=$$ > f1; exec sleep 45'; cat f1
nohup sh -c 'echo nohup=$$ > f2; exec sleep 45' >/dev/null 2>&1 & cat f2
(sh -c 'echo double=$$ > f3; exec sleep 45' &); cat f3
setsid -f sh -c 'trap "" TERM; echo stubborn=$$ > f4; exec sleep 45'; cat f4
echo sh=$$`
	start := time.Now()
	res := runShell(t, newShellTool(r), command, 0)
	procs := pids(t, res.Output, "setsid", "nohup", "double", "stubborn")
	if res.IsError || !strings.HasPrefix(res.Output, "Exit code: 0\n") || strings.Contains(res.Output, "kept the output open") {
		t.Errorf("shell = %+v", res)
	}
	assertReaped(t, procs)
	if d := time.Since(start); d < KillGrace {
		t.Errorf("the call took %v: the process ignoring SIGTERM should have had the %v grace", d, KillGrace)
	}
}

// TestSandboxTimeoutAndCancel: through the helper, a timeout and a
// cancellation end the command and everything it started, setsid'd ones too.
func TestSandboxTimeoutAndCancel(t *testing.T) {
	r, root, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r)
	res := runShell(t, ts, `mkfifo f; setsid -f sh -c 'echo esc=$$ > f; exec sleep 45'; cat f; sleep 45 & echo bg=$!; wait`, 3000)
	if !res.IsError || !strings.HasSuffix(res.Output, "[killed after timeout of 3000 ms]") {
		t.Fatalf("shell past its timeout = %+v", res)
	}
	assertReaped(t, pids(t, res.Output, "esc", "bg"))

	fifo := filepath.Join(root, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan toolResult, 1)
	go func() {
		done <- ts.Run(ctx, "shell", []byte(mustJSON(t, map[string]string{
			"command": `setsid -f sh -c 'echo esc=$$ > started; exec sleep 45'; exec sleep 45`,
		})))
	}()
	started := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // returns once the escaped process has written
		started <- b
	}()
	var b []byte
	select {
	case b = <-started:
	case res := <-done:
		// The command never wrote: unblock the reader, then fail.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-started
		t.Fatalf("shell returned before its escaped process started: %+v", res)
	case <-time.After(30 * time.Second):
		out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,wchan:24,args").CombinedOutput()
		t.Fatalf("the command did not start within 30 s:\n%s", out)
	}
	cancel()
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("shell did not return after its context was cancelled")
	}
	if !res.IsError || !strings.HasSuffix(res.Output, "[cancelled]") {
		t.Errorf("cancelled shell = %+v", res)
	}
	assertReaped(t, pids(t, string(b), "esc"))
}

// TestSandboxExitStatus: the helper reports the shell's end as its own.
func TestSandboxExitStatus(t *testing.T) {
	r, root, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r)
	for _, tt := range []struct{ command, want string }{
		{"echo out; echo err >&2; exit 3", reported(3, "out\nerr\n")},
		{"kill -KILL $$", reported(137, "[killed by signal: killed]")},
		{"kill -TERM $$", reported(143, "[killed by signal: terminated]")},
		{"pwd", reported(0, root+"\n")},
	} {
		if res := runShell(t, ts, tt.command, 0); withoutWall(res.Output) != tt.want {
			t.Errorf("shell %q = %q, want %q", tt.command, res.Output, tt.want)
		}
	}
}

// TestSandboxFiles checks the Landlock rules on this kernel: a command reads
// the workspace and /usr, writes the workspace and the temp dir, and neither
// writes elsewhere nor reads hearth's data or config directory (nor through
// a symlink in the workspace), nor the daemon's memory, nor signals it.
func TestSandboxFiles(t *testing.T) {
	abi, why := landlockABI()
	if abi == 0 {
		t.Skipf("no Landlock here: %s", why)
	}
	// Outside /tmp, which commands see a private copy of.
	base := hostDir(t)
	ws, tmp, data, config := filepath.Join(base, "ws"), filepath.Join(base, "tmp"), filepath.Join(base, "data"), filepath.Join(base, "config")
	writeFile(t, filepath.Join(ws, "in.txt"), "workspace content\n")
	writeFile(t, filepath.Join(data, "hearth.db"), "database-secret\n")
	writeFile(t, filepath.Join(config, "env"), "OPENAI_API_KEY=sk-env-file-secret\n")
	mkdir(t, tmp)
	symlink(t, filepath.Join(data, "hearth.db"), filepath.Join(ws, "db-link"))
	t.Setenv("TMPDIR", tmp)
	t.Setenv("OPENAI_API_KEY", "sk-process-secret")
	r, err := openRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	removePrivateTmp(t, ws)
	t.Cleanup(func() { r.Close() })
	useSandbox(t, data, config)
	ts := newShellTool(r)

	allowed := []string{
		"cat in.txt",
		"head -c 4 /usr/bin/env >/dev/null",
		"echo new > new.txt && mkdir -p d/e && echo x > d/e/f && mv d/e/f g",
		`echo x > "$TMPDIR/t.txt" && rm "$TMPDIR/t.txt"`,
		"ls / " + base + " " + data + " >/dev/null", // names everywhere, hearth's included
		"ls -l /bin/sh && test -x /usr/bin/env",
	}
	for _, c := range allowed {
		if res := runShell(t, ts, c, 0); res.IsError {
			t.Errorf("sandboxed %q failed: %s", c, res.Output)
		}
	}
	refused := []string{
		"echo x > " + filepath.Join(base, "outside.txt"),
		"cat " + filepath.Join(data, "hearth.db"),
		"cat " + filepath.Join(config, "env"),
		"cat db-link",
		"rm " + filepath.Join(config, "env"),
		// Landlock's ptrace rule: the links of /proc/PID (environ, though,
		// stays readable: see cmd/hearth's TestServeHidesSecrets).
		fmt.Sprintf("readlink /proc/%d/cwd", os.Getpid()),
		fmt.Sprintf("readlink /proc/%d/exe", os.Getpid()),
	}
	if abi >= 6 {
		refused = append(refused, fmt.Sprintf("kill -0 %d", os.Getpid()))
	}
	for _, c := range refused {
		res := runShell(t, ts, c, 0)
		if !res.IsError || strings.Contains(res.Output, "secret") {
			t.Errorf("sandboxed %q was allowed: %s", c, res.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "outside.txt")); err == nil {
		t.Error("a sandboxed command wrote outside the workspace and the temp dir")
	}
	if _, err := os.Stat(filepath.Join(config, "env")); err != nil {
		t.Errorf("a sandboxed command removed the env file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "g")); err != nil || string(b) != "x\n" {
		t.Errorf("the rename inside the workspace: %q, %v", b, err)
	}
}

// TestSandboxToolEnv: the command sees the allowlisted variables and those
// HEARTH_TOOL_ENV names, not a credential in the daemon's environment,
// whatever its name.
func TestSandboxToolEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-hearth-test-key")
	t.Setenv("DATABASE_URL", "postgres://u:hearth-test-pass@h/db")
	t.Setenv("PLAIN_SETTING", "visible-value")
	t.Setenv("HEARTH_TOOL_ENV", "PLAIN_SETTING")
	r, _, _ := newTree(t)
	useSandbox(t)
	// The helper's environment: unreadable where the command runs in a user
	// namespace of its own; where it is not, it must hold nothing either.
	res := runShell(t, newShellTool(r), "env; tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null", 0)
	if !strings.Contains(res.Output, "PATH=") {
		t.Fatalf("shell env = %+v", res)
	}
	res.Output += helperEnvirons(t)
	for _, leak := range []string{"sk-hearth-test-key", "hearth-test-pass", "OPENAI_API_KEY", "DATABASE_URL", "HEARTH_TOOL_ENV"} {
		if strings.Contains(res.Output, leak) {
			t.Errorf("the command sees %q:\n%s", leak, res.Output)
		}
	}
	if !strings.Contains(res.Output, "PLAIN_SETTING=visible-value\n") || !strings.Contains(res.Output, "PATH="+os.Getenv("PATH")+"\n") {
		t.Errorf("the command does not see PATH and PLAIN_SETTING:\n%s", res.Output)
	}
}

// TestSandboxStatus: the status names the kernel's ABI, or says why not.
func TestSandboxStatus(t *testing.T) {
	s := Status()
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		if !strings.HasPrefix(s, "not sandboxed: ") {
			t.Errorf("without Landlock (%d, %v) Status = %q", v, err, s)
		}
		return
	}
	if want := fmt.Sprintf("Landlock ABI %d: ", v); !strings.HasPrefix(s, want) {
		t.Errorf("Status = %q, want the prefix %q", s, want)
	}
}

// TestExpandGrant: a grant never covers a denied directory; ancestors are
// split into their entries; symlinks to a denied directory or to one of its
// ancestors are skipped, others granted at their target.
func TestExpandGrant(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	writeFile(t, filepath.Join(home, ".bashrc"), "")
	writeFile(t, filepath.Join(home, ".config", "hearth", "env"), "")
	writeFile(t, filepath.Join(home, ".config", "git", "config"), "")
	writeFile(t, filepath.Join(home, "src", "p", "main.go"), "")
	writeFile(t, filepath.Join(base, "other", "x"), "")
	symlink(t, filepath.Join(home, ".config", "hearth"), filepath.Join(home, "to-denied"))
	symlink(t, home, filepath.Join(home, "to-home"))
	symlink(t, filepath.Join(base, "other"), filepath.Join(home, "to-other"))
	deny := []string{filepath.Join(home, ".config", "hearth")}

	var got []string
	for _, g := range expandGrant(home, deny, nil) {
		got = append(got, fmt.Sprintf("%s dir=%v", strings.TrimPrefix(g.path, base), g.dir))
	}
	slices.Sort(got)
	want := []string{"/home/.bashrc dir=false", "/home/.config/git dir=true", "/home/src dir=true", "/other dir=true"}
	if !slices.Equal(got, want) {
		t.Errorf("expandGrant(home) =\n%q\nwant\n%q", got, want)
	}
	if g := expandGrant(filepath.Join(home, ".config", "hearth", "env"), deny, nil); len(g) != 0 {
		t.Errorf("a grant inside the denied directory = %v", g)
	}
	if g := expandGrant(filepath.Join(home, "src"), deny, nil); len(g) != 1 || g[0].path != filepath.Join(home, "src") {
		t.Errorf("a grant beside the denied directory = %v", g)
	}
}

// helperEnvirons is the environment of every running cell server, read
// from outside: a command cannot read it (Landlock's ptrace scoping).
func helperEnvirons(t *testing.T) string {
	cells.mu.Lock()
	defer cells.mu.Unlock()
	var out strings.Builder
	for _, c := range cells.m {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	return out.String()
}

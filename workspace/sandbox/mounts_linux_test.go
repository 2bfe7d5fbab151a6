package sandbox

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The network modes every test below runs in: a command's mount namespace,
// and what it hides, must not depend on the network.
var netModes = []struct {
	name string
	net  Network
}{
	{"network on", Network{}},
	{"network off", Network{Off: true, Why: "a test"}},
}

// hostDir is a directory for the test outside /tmp (which commands see a
// private copy of) and outside every workspace: under /var/tmp, removed
// with the test.
func hostDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "hearth-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, err = filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// useSandboxAllowing is useSandbox with sockets commands may reach.
func useSandboxAllowing(t *testing.T, sockets ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}, Sockets: sockets})
	t.Cleanup(func() { Set(Config{}) })
}

// connListener listens on the unix socket path and reports the first line
// each connection sends (or "" when it sends none). Closed with the test.
func connListener(t *testing.T, path string) <-chan string {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	done := acceptLines(l, "", ch)
	t.Cleanup(func() { l.Close(); <-done })
	return ch
}

// acceptLines sends on ch, prefixed, the first line each connection l
// accepts sends (or "" when it sends none), until l is closed; done is
// closed then.
func acceptLines(l net.Listener, prefix string, ch chan<- string) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			ch <- prefix + strings.TrimSpace(line)
		}
	}()
	return d
}

// nextConn is the first line of the next connection the listener on path
// got.
func nextConn(t *testing.T, path string, conns <-chan string) string {
	t.Helper()
	select {
	case got := <-conns:
		return got
	case <-time.After(10 * time.Second):
		t.Fatalf("the listener on %s got nothing within 10 s", path)
		return ""
	}
}

// firstConnIsOurs dials path itself and checks its own connection is the
// next the listener got: no command's came before it.
func firstConnIsOurs(t *testing.T, path string, conns <-chan string) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("test\n"))
	c.Close()
	if got := nextConn(t, path, conns); got != "test" {
		t.Errorf("the listener on %s got a command's connection (%q) before the test's", path, got)
	}
}

// pyConnect is a command that connects to the unix socket path and sends a
// line; it fails when it cannot connect.
func pyConnect(path string) string {
	return `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"command\n"); print("connected")' ` + path
}

// TestSandboxHidesOtherSockets: a command reaches no unix socket with a
// path that the user's programs listen on, in /tmp or elsewhere, with the
// network on or off: the test's own listeners see no connection of its.
func TestSandboxHidesOtherSockets(t *testing.T) {
	r, _, _ := newTree(t)
	socks := []string{filepath.Join(t.TempDir(), "in-tmp.sock"), filepath.Join(hostDir(t), "elsewhere.sock")}
	conns := map[string]<-chan string{}
	for _, s := range socks {
		conns[s] = connListener(t, s)
	}
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			for _, s := range socks {
				res := runShell(t, ts, pyConnect(s), 0)
				if !res.IsError || strings.Contains(res.Output, "connected") {
					t.Errorf("a command connected to %s: %s", s, res.Output)
				}
				if !strings.Contains(res.Output, "Error") {
					t.Errorf("the command did not try to connect to %s: %s", s, res.Output)
				}
				firstConnIsOurs(t, s, conns[s])
			}
		})
	}
}

// TestSandboxOwnSockets: a socket a command makes itself, in the workspace
// or in its /tmp, works for it.
func TestSandboxOwnSockets(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	command := `python3 -c 'import socket,os
for p in ["own.sock", "/tmp/own.sock"]:
    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(p)
    a, _ = s.accept(); c.sendall(b"ok"); print(p, a.recv(2).decode())
    os.unlink(p)'`
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			res := runShell(t, newShellTool(r).WithNetwork(m.net), command, 0)
			if want := reported(0, "own.sock ok\n/tmp/own.sock ok\n"); withoutWall(res.Output) != want {
				t.Errorf("a command's own sockets: %q, want %q", res.Output, want)
			}
		})
	}
}

// TestSandboxAllowedSockets: the sockets the user lists
// (HEARTH_SANDBOX_SOCKETS, Config.Sockets) stay reachable, in /tmp or
// elsewhere.
func TestSandboxAllowedSockets(t *testing.T) {
	r, _, _ := newTree(t)
	socks := []string{filepath.Join(t.TempDir(), "agent.sock"), filepath.Join(hostDir(t), "agent.sock")}
	conns := map[string]<-chan string{}
	for _, s := range socks {
		conns[s] = connListener(t, s)
	}
	useSandboxAllowing(t, socks...)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			for _, s := range socks {
				if res := runShell(t, ts, pyConnect(s), 0); withoutWall(res.Output) != reported(0, "connected\n") {
					t.Errorf("a command could not reach the allowed %s: %s", s, res.Output)
				}
				if got := nextConn(t, s, conns[s]); got != "command" {
					t.Errorf("the allowed %s got %q", s, got)
				}
			}
		})
	}
}

// TestSandboxTmux: a command cannot have the user's tmux server run
// something outside the sandbox: `tmux new-window` fails, the server has
// no new window, and the window's command never ran.
func TestSandboxTmux(t *testing.T) {
	r, _, outside := newTree(t)
	sock := filepath.Join(t.TempDir(), "tmux", "default")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-f", "/dev/null", "-S", sock}, args...)...)
		cmd.Env = append(os.Environ(), "TERM=xterm")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("new-session", "-d", "-s", "user"); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			marker := filepath.Join(outside, "tmux-"+strings.ReplaceAll(m.name, " ", "-"))
			res := runShell(t, newShellTool(r).WithNetwork(m.net), "tmux -S "+sock+" new-window -d 'touch "+marker+"; exec sleep 600'", 0)
			if !res.IsError {
				t.Errorf("tmux new-window from a command: %s", res.Output)
			}
			// new-window returns once the window exists: count them.
			out, err := tmux("list-windows", "-a", "-F", "#{window_id}")
			if err != nil {
				t.Fatalf("tmux list-windows: %v: %s", err, out)
			}
			if n := strings.Count(out, "\n"); n != 1 {
				t.Errorf("the tmux server has %d windows, want the user's 1: %q", n, out)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the tmux server ran the command's %s", marker)
			}
		})
	}
}

// TestSandboxDBus: a command cannot talk to the user's D-Bus session bus
// (systemd-run --user would run anything through it).
func TestSandboxDBus(t *testing.T) {
	r, _, _ := newTree(t)
	sock := filepath.Join(hostDir(t), "bus")
	out, err := exec.Command("dbus-daemon", "--session", "--address=unix:path="+sock, "--fork", "--print-pid").Output()
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("dbus-daemon printed %q", out)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGTERM) })
	listNames := "dbus-send --bus=unix:path=" + sock + " --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames"
	if out, err := exec.Command("/bin/sh", "-c", listNames).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("org.freedesktop.DBus")) {
		t.Fatalf("the test itself cannot reach its bus: %v: %s", err, out)
	}
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			res := runShell(t, newShellTool(r).WithNetwork(m.net), listNames, 0)
			if !res.IsError || strings.Contains(res.Output, "array") {
				t.Errorf("a command reached the session bus: %s", res.Output)
			}
		})
	}
}

// TestSandboxPrivateTmp: a command's /tmp is the workspace's own: what one
// command leaves there the next one sees, while what is in the machine's
// /tmp is not there, nor is the command's file in the machine's /tmp.
func TestSandboxPrivateTmp(t *testing.T) {
	r, _, _ := newTree(t)
	hostFile := filepath.Join(os.TempDir(), "hearth-host-"+filepath.Base(t.TempDir()))
	writeFile(t, hostFile, "the machine's\n")
	t.Cleanup(func() { os.Remove(hostFile) })
	name := "/tmp/hearth-left-" + filepath.Base(t.TempDir())
	t.Cleanup(func() { os.Remove(name) })
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			if res := runShell(t, ts, "echo '"+m.name+"' > "+name, 0); res.IsError {
				t.Fatalf("writing %s: %s", name, res.Output)
			}
			if res := runShell(t, ts, "cat "+name, 0); withoutWall(res.Output) != reported(0, m.name+"\n") {
				t.Errorf("the next command's %s: %q", name, res.Output)
			}
			if res := runShell(t, ts, "cat "+hostFile, 0); !res.IsError || strings.Contains(res.Output, "machine's") {
				t.Errorf("a command sees the machine's %s: %s", hostFile, res.Output)
			}
			if _, err := os.Stat(name); err == nil {
				t.Errorf("the command's %s is in the machine's /tmp", name)
			}
		})
	}
}

// TestSandboxGitProtected: in a workspace that is a git repository, a
// command can commit, but can neither change .git's configuration (where
// core.fsmonitor or a filter would run a command as the user, outside the
// sandbox, at the user's next git command) nor write a hook, nor move .git
// away.
func TestSandboxGitProtected(t *testing.T) {
	r, root, outside := newTree(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@h", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	git("add", "a.txt")
	git("commit", "-q", "-m", "first")
	config, err := os.ReadFile(filepath.Join(root, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			marker := filepath.Join(outside, "fsmonitor")
			for _, c := range []string{
				"git config core.fsmonitor 'touch " + marker + "'",
				"echo x > .git/config",
				"echo 'touch " + marker + "' > .git/hooks/pre-commit",
				"mkdir -p .git/info && echo x > .git/info/attributes",
				"mv .git .g",
				"mv .git/config .git/c",
			} {
				if res := runShell(t, ts, c, 0); !res.IsError {
					t.Errorf("%q in a command: %s", c, res.Output)
				}
			}
			if b, err := os.ReadFile(filepath.Join(root, ".git", "config")); err != nil || !bytes.Equal(b, config) {
				t.Errorf(".git/config changed: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit")); err == nil {
				t.Error("a command wrote a hook")
			}
			commit := "echo '" + m.name + "' > f && git add f && git -c user.name=m -c user.email=m@h commit -q -m '" + m.name + "' && git log --format=%s -1"
			if res := runShell(t, ts, commit, 0); withoutWall(res.Output) != reported(0, m.name+"\n") {
				t.Errorf("a commit in a command: %s", res.Output)
			}
		})
	}
}

// TestSandboxNoAmbientCaps: the capability the helper keeps to make the
// command's mounts is not the command's.
func TestSandboxNoAmbientCaps(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			res := runShell(t, newShellTool(r).WithNetwork(m.net), "grep CapAmb /proc/self/status", 0)
			if !strings.HasPrefix(body(res.Output), "CapAmb:\t0000000000000000\n") {
				t.Errorf("a command's ambient capabilities: %q", res.Output)
			}
		})
	}
}

// TestSocketStatus: doctor's line names the allowed sockets that exist and
// those that do not, or says every socket is reachable and why.
func TestSocketStatus(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "agent.sock")
	connListener(t, sock)
	missing := filepath.Join(t.TempDir(), "gone.sock")
	if got, want := socketStatus(nil, nil), "commands reach no unix socket with a path outside the workspace and their own /tmp"; got != want {
		t.Errorf("socketStatus(none) = %q, want %q", got, want)
	}
	got := socketStatus([]string{sock, missing}, nil)
	if want := " but " + sock + " (HEARTH_SANDBOX_SOCKETS); not sockets now, from HEARTH_SANDBOX_SOCKETS: " + missing; !strings.HasSuffix(got, want) {
		t.Errorf("socketStatus(allowed) = %q, want the suffix %q", got, want)
	}
	if got := socketStatus([]string{sock}, syscall.EPERM); !strings.HasPrefix(got, "every unix socket with a path is reachable") || !strings.Contains(got, "operation not permitted") {
		t.Errorf("socketStatus without namespaces, sockets allowed = %q", got)
	}
	if got := socketStatus(nil, syscall.EPERM); !strings.HasPrefix(got, "commands may open no unix socket") || !strings.Contains(got, "operation not permitted") {
		t.Errorf("socketStatus without namespaces = %q", got)
	}
}

// TestNoNamespacesNoUnixSockets: where user namespaces are refused the
// helper's second stage runs the command without a mount namespace (no
// --own-mounts): there it cannot connect to a unix socket outside — by
// path or abstract — while a socketpair still works.
func TestNoNamespacesNoUnixSockets(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	connListener(t, sock)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := `import socket, sys
def try_connect(addr):
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr)
for addr in (sys.argv[1], "\0hearth-test-abstract"):
    try:
        try_connect(addr)
        print("reached", repr(addr))
    except OSError as e:
        print("refused", e.errno)
a, b = socket.socketpair()
a.send(b"x")
print("pair", b.recv(1).decode())
`
	script := filepath.Join(t.TempDir(), "probe.py")
	writeFile(t, script, probe)
	cmd := exec.Command(exe, sandboxSubcommand, confineFlag, "--write", t.TempDir(), "--", "/usr/bin/python3 "+script+" "+sock)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the second stage: %v\n%s", err, out)
	}
	if want := "refused 13\nrefused 13\npair x\n"; string(out) != want {
		t.Errorf("without namespaces a command got %q, want %q", out, want)
	}
}

// TestSandboxGitSubmodule: a submodule's configuration and hooks, in the
// workspace's .git/modules, are as read-only as the workspace's own; a
// commit in it still works.
func TestSandboxGitSubmodule(t *testing.T) {
	r, root, outside := newTree(t)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@h", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	sub := filepath.Join(outside, "sub")
	mkdir(t, sub)
	git(sub, "init", "-q")
	writeFile(t, filepath.Join(sub, "s.txt"), "s\n")
	git(sub, "add", "s.txt")
	git(sub, "commit", "-q", "-m", "sub")
	git(root, "init", "-q")
	git(root, "submodule", "-q", "add", sub, "sub")
	git(root, "commit", "-q", "-m", "with sub")
	modConfig := filepath.Join(root, ".git", "modules", "sub", "config")
	before, err := os.ReadFile(modConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gitMountPaths(filepath.Join(root, "sub")), []string{filepath.Join(root, "sub", ".git"), filepath.Join(root, ".git", "modules", "sub")}; !slices.Equal(got, want) {
		t.Errorf("gitMountPaths(the submodule) = %q, want %q", got, want)
	}
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			for _, c := range []string{
				"git -C sub config core.fsmonitor 'touch x'",
				"echo x > .git/modules/sub/hooks/pre-commit",
				"mv .git/modules/sub/config .git/modules/sub/c",
			} {
				if res := runShell(t, ts, c, 0); !res.IsError {
					t.Errorf("%q in a command: %s", c, res.Output)
				}
			}
			if b, err := os.ReadFile(modConfig); err != nil || !bytes.Equal(b, before) {
				t.Errorf("the submodule's config changed: %q, %v", b, err)
			}
			commit := "cd sub && echo '" + m.name + "' > f && git add f && git -c user.name=m -c user.email=m@h commit -q -m '" + m.name + "' && git log --format=%s -1"
			if res := runShell(t, ts, commit, 0); withoutWall(res.Output) != reported(0, m.name+"\n") {
				t.Errorf("a commit in the submodule: %s", res.Output)
			}
		})
	}
}

// TestSandboxPrivateTMPDIR: $TMPDIR, where it is not /tmp, is the same
// private directory as /tmp, and what the machine has there is not seen.
func TestSandboxPrivateTMPDIR(t *testing.T) {
	r, _, _ := newTree(t)
	tmpdir := hostDir(t)
	writeFile(t, filepath.Join(tmpdir, "machine.txt"), "the machine's\n")
	t.Setenv("TMPDIR", tmpdir)
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			res := runShell(t, newShellTool(r).WithNetwork(m.net), `echo same > "$TMPDIR/f" && cat /tmp/f && ! test -e "$TMPDIR/machine.txt"`, 0)
			if withoutWall(res.Output) != reported(0, "same\n") {
				t.Errorf("$TMPDIR in a command: %s", res.Output)
			}
		})
	}
}

// TestSandboxRuntimeDir: $XDG_RUNTIME_DIR (Sandbox.RuntimeDir), where the
// session bus, Wayland and the agents keep their sockets, is empty for a
// command — but for a workspace inside it, which stays.
func TestSandboxRuntimeDir(t *testing.T) {
	rd := hostDir(t)
	sock := filepath.Join(rd, "bus")
	conns := connListener(t, sock)
	writeFile(t, filepath.Join(rd, "state.txt"), "state\n")
	root := filepath.Join(rd, "ws")
	writeFile(t, filepath.Join(root, "a.txt"), "kept\n")
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	removePrivateTmp(t, root)
	t.Cleanup(func() { r.Close() })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}, RuntimeDir: rd})
	t.Cleanup(func() { Set(Config{}) })
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			if res := runShell(t, ts, "ls -A "+rd+" && cat a.txt", 0); withoutWall(res.Output) != reported(0, "ws\nkept\n") {
				t.Errorf("the runtime dir in a command: %s", res.Output)
			}
			if res := runShell(t, ts, pyConnect(sock), 0); !res.IsError {
				t.Errorf("a command reached %s: %s", sock, res.Output)
			}
			firstConnIsOurs(t, sock, conns)
		})
	}
}

// TestSandboxRuntimeDirInTmp: a runtime dir inside /tmp is hidden with it,
// and an allowed socket there still reached.
func TestSandboxRuntimeDirInTmp(t *testing.T) {
	r, _, _ := newTree(t)
	rd := t.TempDir()
	sock := filepath.Join(rd, "agent")
	conns := connListener(t, sock)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}, RuntimeDir: rd, Sockets: []string{sock}})
	t.Cleanup(func() { Set(Config{}) })
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			if res := runShell(t, newShellTool(r).WithNetwork(m.net), pyConnect(sock), 0); withoutWall(res.Output) != reported(0, "connected\n") {
				t.Errorf("the allowed %s: %s", sock, res.Output)
			}
			if got := nextConn(t, sock, conns); got != "command" {
				t.Errorf("the allowed %s got %q", sock, got)
			}
		})
	}
}

// TestSandboxGitWorktree: in a workspace that is a linked worktree, the .git
// file naming its git directory is read-only, as are the worktree's
// commondir and the main repository's configuration; git still reads the
// repository.
func TestSandboxGitWorktree(t *testing.T) {
	base := hostDir(t)
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@h", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	mkdir(t, main)
	git(main, "init", "-q")
	writeFile(t, filepath.Join(main, "a.txt"), "a\n")
	git(main, "add", "a.txt")
	git(main, "commit", "-q", "-m", "first")
	git(main, "worktree", "add", "-q", wt)
	r, err := openRoot(wt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	removePrivateTmp(t, wt)
	gitFile, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	useSandbox(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			ts := newShellTool(r).WithNetwork(m.net)
			for _, c := range []string{
				"echo 'gitdir: /elsewhere' > .git",
				"rm .git",
				"echo ../elsewhere > " + filepath.Join(main, ".git", "worktrees", "wt", "commondir"),
				"git config core.fsmonitor 'touch x'",
			} {
				if res := runShell(t, ts, c, 0); !res.IsError {
					t.Errorf("%q in a command: %s", c, res.Output)
				}
			}
			if b, err := os.ReadFile(filepath.Join(wt, ".git")); err != nil || !bytes.Equal(b, gitFile) {
				t.Errorf("the worktree's .git file changed: %q, %v", b, err)
			}
			if res := runShell(t, ts, "git log --format=%s -1", 0); withoutWall(res.Output) != reported(0, "first\n") {
				t.Errorf("git log in the worktree: %s", res.Output)
			}
		})
	}
}

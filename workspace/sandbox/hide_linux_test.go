package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxHidesSocket: where the command runs in namespaces of its own,
// with the network on or off, it cannot reach the daemon's socket — the
// socket's directory is covered (here by the private /tmp), or the socket
// alone when that directory holds the workspace, whose files stay — and
// the daemon's directory looks empty. Where user namespaces are refused,
// nothing is hidden, as the docs say: there the daemon's check of each
// connection is the wall.
func TestSandboxHidesSocket(t *testing.T) {
	r, rootDir, _ := newTree(t)
	writeFile(t, filepath.Join(rootDir, "a.txt"), "kept\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nsErr := helperNetnsErr([]string{exe, sandboxSubcommand})
	t.Logf("network namespace: %v", nsErr)
	for _, c := range []struct {
		name, sock string
		dirCovered bool
	}{
		{"a directory of its own", filepath.Join(t.TempDir(), "run", "h.sock"), true},
		{"in the workspace", filepath.Join(rootDir, "h.sock"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(c.sock), 0o700); err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("unix", c.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			os.WriteFile(filepath.Join(filepath.Dir(c.sock), "lock"), nil, 0o600)
			Set(Config{Helper: []string{exe, sandboxSubcommand}, Socket: c.sock})
			defer Set(Config{})
			ts := newShellTool(r)
			dial := probeCommand(t, "__dial-unix", c.sock)
			look := dial + "; ls -A " + filepath.Dir(c.sock) + "; cat a.txt"

			for _, net := range []Network{{}, {Off: true, Why: "full-auto mode"}} {
				out := runShell(t, ts.WithNetwork(net), look, 0).Output
				t.Logf("network off %v: %q", net.Off, out)
				if nsErr != nil {
					if !strings.HasPrefix(body(out), "connected\n") {
						t.Errorf("without namespaces nothing hides the socket, yet: %q", out)
					}
					continue
				}
				if !strings.HasPrefix(body(out), "dial: ") {
					t.Errorf("network off %v: the command reached the socket: %q", net.Off, out)
				}
				if got := strings.Contains(out, "lock\n"); got == c.dirCovered {
					t.Errorf("network off %v: the socket's directory covered: %v, want %v: %q", net.Off, !got, c.dirCovered, out)
				}
				if !strings.Contains(out, "kept\n") {
					t.Errorf("network off %v: the workspace is not as it was: %q", net.Off, out)
				}
			}
		})
	}
}

// A command cannot connect to an abstract unix socket made outside its
// sandbox (Landlock's scoping, ABI 6+): a session bus, an X server or a
// terminal multiplexer listening there could run a command for it outside
// the sandbox. Below ABI 6 nothing stops it, as the docs say.
func TestSandboxScopesAbstractSockets(t *testing.T) {
	r, _, _ := newTree(t)
	name := "@hearth-test-" + filepath.Base(t.TempDir())
	l, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}})
	defer Set(Config{})
	out := runShell(t, newShellTool(r).WithNetwork(Network{}), probeCommand(t, "__dial-unix", name), 0).Output
	abi, _ := landlockABI()
	t.Logf("Landlock ABI %d: %q", abi, out)
	if abi >= 6 && !strings.HasPrefix(body(out), "dial: ") {
		t.Fatalf("a sandboxed command reached an abstract socket made outside it: %q", out)
	}
	if abi < 6 && !strings.HasPrefix(body(out), "connected") {
		t.Fatalf("below ABI 6 nothing scopes abstract sockets, yet: %q", out)
	}
}

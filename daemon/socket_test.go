package daemon

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The socket's directory is 0700 and the socket 0600; a second daemon is
// refused; a stale socket (nobody answers) is replaced.
func TestListenPermissionsSecondDaemonAndStaleSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "run", "hearth.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v", fi.Mode().Perm())
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(path); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Listen: %v, want ErrAlreadyRunning", err)
	}
	// Leave a stale socket behind: close the listener without unlinking.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	ln2, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	ln2.Close()
}

// A path that exists and is not a socket is never removed.
func TestListenRefusesNonSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "hearth.sock")
	os.WriteFile(path, []byte("precious"), 0o600)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("the file was touched")
	}
}

// A socket directory open to others is tightened to 0700.
func TestListenTightensOpenDirectory(t *testing.T) {
	dir := filepath.Join(shortDir(t), "run")
	os.Mkdir(dir, 0o777)
	os.Chmod(dir, 0o777)
	ln, err := Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v after Listen", fi.Mode().Perm())
	}
}

// The API key reaches the model API and nothing else: not the logs, not
// the database, not status.
func TestAPIKeyNeverLeaks(t *testing.T) {
	const key = "sk-test-SECRETVALUE0123456789"
	td := startDaemon(t, sim.Options{APIKey: key}, key)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "please read a.txt")
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if strings.Contains(st.APIKey, "SECRETVALUE") || st.APIKey == "" {
		t.Errorf("status shows the key as %q", st.APIKey)
	}
	td.d.Close() // flush the database
	for _, name := range []string{"hearth.db", "hearth.db-wal"} {
		b, err := os.ReadFile(filepath.Join(td.cfg.DataDir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SECRETVALUE") {
			t.Errorf("%s contains the API key", name)
		}
	}
	if strings.Contains(td.logs.String(), "SECRETVALUE") {
		t.Error("the logs contain the API key")
	}
	if td.logs.Len() == 0 {
		t.Error("no logs were written: the check above proves nothing")
	}
}

// A wrong key is a clear error for the turn, not a hang.
func TestRejectedAPIKey(t *testing.T) {
	td := startDaemon(t, sim.Options{APIKey: "sk-right"}, "sk-wrong")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	err := ed.call(rpc.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []map[string]string{{"type": "text", "text": "hi"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "API key rejected") {
		t.Fatalf("prompt with a wrong key: %v", err)
	}
}

// A client that connects and never sends a byte does not hold up Close.
func TestCloseWithSilentClient(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	c, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A second, well-behaved client proves the first was accepted and is
	// being served (its ServeConn is waiting for a first byte).
	ed := td.connect()
	ed.initialize()
	// Accepted in order, but registered by its own goroutine: ask until
	// the daemon counts it (each ask is a round trip, not a timer).
	var st rpc.Status
	for i := 0; i < 1000 && st.Clients != 2; i++ {
		ed.must(rpc.MethodHearthStatus, nil, &st)
	}
	if st.Clients != 2 {
		t.Fatalf("clients = %d, want the silent one counted too", st.Clients)
	}
	done := make(chan error, 1)
	go func() { done <- td.d.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on a client that never spoke")
	}
}

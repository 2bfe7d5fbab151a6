package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
	"github.com/hearthd/hearth/session/sim"
)

// A second daemon on the data directory of a running one (on another
// socket) is refused before it opens the database, naming the first's pid
// and socket and what to do; once the first has closed, it starts.
func TestSecondDaemonOnOneDataDirRefused(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	cfg := td.cfg
	cfg.Socket = filepath.Join(filepath.Dir(td.cfg.Socket), "other.sock")
	d, err := New(cfg, nil)
	if err == nil {
		d.Close()
		t.Fatal("a second daemon started on the data directory of a running one")
	}
	want := fmt.Sprintf("another hearth daemon (pid %d, socket %s) uses the data directory %s", os.Getpid(), td.cfg.Socket, td.cfg.DataDir)
	if !errors.Is(err, safesocket.ErrDataDirInUse) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "HEARTH_SOCKET="+td.cfg.Socket+" hearth stop") || !strings.Contains(err.Error(), "HEARTH_DATA_DIR") {
		t.Fatalf("second daemon: %v\nwant it to say %q, and how to stop the first or choose another directory", err, want)
	}
	// The first is untouched: it still serves.
	e := td.connect()
	e.initialize()
	e.prompt(e.newSession(td.root), "hello")

	td.d.Close()
	d, err = New(cfg, nil)
	if err != nil {
		t.Fatalf("after the first daemon closed: %v", err)
	}
	d.Close()
}

// A daemon that serves no socket (hearth ask --no-daemon, serve --stdio)
// is named by its command.
func TestDataDirHeldByInProcessDaemon(t *testing.T) {
	dir := shortDir(t)
	cfg := Config{Socket: filepath.Join(dir, "run", "hearth.sock"), DataDir: filepath.Join(dir, "data"), Simulator: true, BaseURL: "http://127.0.0.1:9/v1",
		NoSocket: "hearth ask --no-daemon", Version: "test"}
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cfg.NoSocket = ""
	d2, err := New(cfg, nil)
	if err == nil {
		d2.Close()
		t.Fatal("a second daemon started beside an in-process one")
	}
	want := fmt.Sprintf("another hearth process (pid %d, hearth ask --no-daemon) uses the data directory %s", os.Getpid(), cfg.DataDir)
	if !errors.Is(err, safesocket.ErrDataDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second daemon: %v\nwant %q", err, want)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, safesocket.DataDirLockName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
}

// A daemon started while the one holding the data directory shuts down
// (hearth stop, an idle exit, then an editor's hearth acp at once) waits
// for it to let go instead of being refused; it starts once the first has
// closed, not before.
func TestNewWaitsForAClosingDaemon(t *testing.T) {
	td := startDaemon(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 100}}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	turn := make(chan error, 1)
	go func() {
		turn <- e.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("sim:tokens=300")}}, nil)
	}()
	e.waitFor("the answer streaming", func(ups []acp.SessionUpdate) bool {
		for _, u := range ups {
			if u.AgentMessageChunk != nil {
				return true
			}
		}
		return false
	})
	shut := make(chan error, 1)
	go func() { shut <- td.d.Shutdown(time.Minute) }() // waits for the turn
	lock := filepath.Join(td.cfg.DataDir, safesocket.DataDirLockName)
	for deadline := time.Now().Add(10 * time.Second); ; { // no event says the record changed
		if b, _ := os.ReadFile(lock); strings.Contains(string(b), "state=closing") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shutting-down daemon never marked its data directory closing")
		}
		time.Sleep(time.Millisecond)
	}

	cfg := td.cfg
	cfg.Socket = filepath.Join(filepath.Dir(td.cfg.Socket), "next.sock")
	started := make(chan error, 1)
	var d2 *Daemon
	go func() {
		var err error
		d2, err = New(cfg, nil)
		started <- err
	}()
	select {
	case err := <-started:
		t.Fatalf("a new daemon did not wait for the closing one (its turn still running): %v", err)
	case <-turn: // its answer; or, when Shutdown's Close beats the reply, EOF
	}
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-started; err != nil {
		t.Fatalf("New after the first daemon closed: %v", err)
	}
	d2.Close()
}

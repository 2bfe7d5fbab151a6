package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), want) ||
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
	cfg := Config{Socket: filepath.Join(dir, "run", "hearth.sock"), DataDir: filepath.Join(dir, "data"), Simulator: true,
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
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second daemon: %v\nwant %q", err, want)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, dataDirLockName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
}

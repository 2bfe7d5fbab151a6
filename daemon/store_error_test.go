package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/store/storetest"
)

// A database damaged at rest that still opens is found at start: New
// refuses, naming the file and the command that moves it aside, and moves
// nothing itself.
func TestDamagedDatabaseRefusedAtStart(t *testing.T) {
	dir := shortDir(t)
	cfg := Config{Socket: filepath.Join(dir, "run", "hearth.sock"), DataDir: filepath.Join(dir, "data"), Simulator: true, BaseURL: "http://127.0.0.1:9/v1", Version: "test"}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(context.Background(), store.Session{ID: "s1", Root: dir, Mode: ModeAsk, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	storetest.Damage(t, cfg.DBPath(), "sessions")

	d, err := New(cfg, nil)
	if err == nil {
		d.Close()
		t.Fatal("a daemon started on a damaged database")
	}
	fix := "move it aside: mv " + cfg.DBPath() + " " + cfg.DBPath() + ".corrupt"
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), cfg.DBPath()+" is damaged") || !strings.Contains(err.Error(), fix) {
		t.Fatalf("New on a damaged database: %v\nwant the file named and %q", err, fix)
	}
	if _, err := os.Stat(cfg.DBPath()); err != nil {
		t.Errorf("the damaged database is gone: %v", err)
	}
	if _, err := os.Stat(cfg.DBPath() + ".corrupt"); err == nil {
		t.Error("the daemon moved the database aside itself")
	}
}

// The database damaged under a running daemon: the next turn fails as a
// store error (-32012) naming the file and the fix, never "internal error";
// so does inspect.
func TestStoreErrorDuringTurn(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if r := e.prompt(id, "hello"); r != acp.StopReasonEndTurn {
		t.Fatalf("first turn: %s", r)
	}
	storetest.Damage(t, td.cfg.DBPath(), "items")

	path := td.cfg.DBPath()
	check := func(what string, err error) {
		t.Helper()
		var wire *jsonrpc2.Error
		if !errors.As(err, &wire) || wire.Code != rpc.CodeStore || strings.Contains(wire.Message, "internal error") ||
			!strings.Contains(wire.Message, "store error") || !strings.Contains(wire.Message, "malformed") ||
			!strings.Contains(wire.Message, "mv "+path+" "+path+".corrupt") {
			t.Errorf("%s on a damaged database: %v; want -32012 naming %s and the fix", what, err, path)
		}
	}
	var pr acp.PromptResponse
	check("session/prompt", e.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("again")}}, &pr))
	var ins rpc.InspectResult
	check("_hearth/inspect", e.call(rpc.MethodHearthInspect, rpc.InspectParams{SessionID: string(id)}, &ins))
}

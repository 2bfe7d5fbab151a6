package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// storedSession stores a session of one prompt in the data directory of
// the configuration isolate(t) made in dir, with its workspace dir/ws.
func storedSession(t *testing.T, dir, id string) {
	t.Helper()
	root := filepath.Join(dir, "ws")
	os.MkdirAll(root, 0o755)
	root, _ = filepath.EvalSymlinks(root)
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.CreateSession(ctx, store.Session{ID: id, Root: root, Mode: "ask"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Items().Append(ctx, id, 0, []store.NewItem{{Origin: store.OriginInput, Data: session.UserMessage("remember the word walrus")}}); err != nil {
		t.Fatal(err)
	}
}

// hearth compact SESSION compacts a stored session — by a daemon of its
// own when none runs, through the running one otherwise — and inspect shows
// the compaction; a bad id is refused with the way to find a good one.
func TestCompactCommand(t *testing.T) {
	dir := isolate(t)
	storedSession(t, dir, "ses_walrus1")

	compact := func(how string, n int) {
		t.Helper()
		code, out, errOut := runCLI("compact", "ses_wal")
		if code != 0 || !strings.Contains(out, "compacted ses_walrus1 through item") {
			t.Fatalf("%s: compact: exit %d, stdout %q, stderr %q", how, code, out, errOut)
		}
		code, out, _ = runCLI("inspect", "ses_walrus1", "--json")
		var res rpc.InspectResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Session == nil || len(res.Session.Compactions) != n {
			t.Fatalf("%s: inspect after compact: exit %d, %s", how, code, out)
		}
	}
	compact("no daemon", 1)
	serveInProcess(t)
	compact("through the daemon", 2)
	if code, _, errOut := runCLI("compact", "nope"); code == 0 || !strings.Contains(errOut, "unknown session") {
		t.Errorf("compact of no session: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI("compact"); code != 2 || !strings.Contains(errOut, "hearth inspect lists them") {
		t.Errorf("compact without a session: exit %d, %q", code, errOut)
	}
}

// With HEARTH_COMPACTION=server, hearth compact has the API compact (the
// built-in simulator's endpoint here) and says so; inspect says the
// compaction's item is the API's, encrypted, rather than printing an empty
// summary.
func TestCompactCommandServer(t *testing.T) {
	dir := isolate(t)
	t.Setenv("HEARTH_COMPACTION", "server")
	storedSession(t, dir, "ses_server1")
	code, out, errOut := runCLI("compact", "ses_server1")
	if code != 0 || !strings.Contains(out, "with the API's compaction") {
		t.Fatalf("compact: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI("inspect", "ses_server1")
	if code != 0 || !strings.Contains(out, "by the API (resp_") || !strings.Contains(out, "encrypted") {
		t.Fatalf("inspect: exit %d:\n%s", code, out)
	}
}

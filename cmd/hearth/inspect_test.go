package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// `hearth inspect PREFIX` shows the one session whose id begins with
// PREFIX, with or without a daemon; a prefix of several sessions is refused
// with the candidates; one of none is an unknown session.
func TestInspectIDPrefix(t *testing.T) {
	isolate(t)
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ses_ab12", "ses_ab34", "ses_cd56"} {
		if err := db.CreateSession(context.Background(), store.Session{ID: id, Root: "/src/app", Title: "title of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	check := func(how string) {
		t.Helper()
		code, out, errOut := runCLI("inspect", "ses_c", "--json")
		var res rpc.InspectResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Session == nil || res.Session.ID != "ses_cd56" {
			t.Errorf("%s: inspect ses_c: exit %d, stdout %q, stderr %q", how, code, out, errOut)
		}
		code, out, errOut = runCLI("inspect", "ses_ab12")
		if code != 0 || !strings.Contains(out, "session   ses_ab12\n") {
			t.Errorf("%s: inspect by the whole id: exit %d, stdout %q, stderr %q", how, code, out, errOut)
		}
		code, out, errOut = runCLI("inspect", "ses_a")
		if code != 1 || out != "" || !strings.Contains(errOut, `"ses_a" is the beginning of more than one session id (ses_ab12, ses_ab34): give more of it`) {
			t.Errorf("%s: inspect ses_a: exit %d, stdout %q, stderr %q", how, code, out, errOut)
		}
		code, _, errOut = runCLI("inspect", "ses_x")
		if code != 1 || !strings.Contains(errOut, `unknown session: "ses_x"`) {
			t.Errorf("%s: inspect ses_x: exit %d, stderr %q", how, code, errOut)
		}
	}
	check("no daemon: from the database")
	serveInProcess(t)
	check("through the daemon")
}

// A session's workspace path and title (the user's words, a directory's
// name) are listed with their controls made visible: a title holding a
// carriage return and an erase sequence cannot rewrite the table's line.
func TestInspectShowsControlsEscaped(t *testing.T) {
	isolate(t)
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	s := store.Session{ID: "ses_ctl", Root: "/src/\x1b]0;pwned\x07app", Title: "fix it\r\x1b[2Kall good\u202e"}
	if err := db.CreateSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, args := range [][]string{{"inspect"}, {"inspect", "ses_ctl"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if bad := rawControls(out, false); len(bad) > 0 {
			t.Errorf("%v printed raw control characters %q:\n%q", args, bad, out)
		}
		if !strings.Contains(out, `/src/\x1b]0;pwned\x07app`) {
			t.Errorf("%v: the workspace is not shown escaped:\n%s", args, out)
		}
	}
	if _, out, _ := runCLI("inspect"); !strings.Contains(out, `fix it\r\x1b[2Kall good\u202e`) {
		t.Errorf("inspect: the title is not shown escaped:\n%s", out)
	}
}

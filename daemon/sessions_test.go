package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

func TestTitle(t *testing.T) {
	for _, c := range []struct{ prompt, want string }{
		{"fix the test", "fix the test"},
		{"\n\n  fix   the\ttest  \nand then the docs", "fix the test"},
		{"red \x1b[31malert\x07 \u202eevil\u202c done\r", "red [31malert evil done"},
		{"Rewrite the session store so that every transcript item is kept exactly as the API sent it",
			"Rewrite the session store so that every transcript item is…"},
		{strings.Repeat("x", 80), strings.Repeat("x", 60) + "…"},
	} {
		if got := title(c.prompt); got != c.want {
			t.Errorf("title(%q) = %q, want %q", c.prompt, got, c.want)
		}
	}
}

// sessionInfos returns the session_info_updates among ups.
func sessionInfos(ups []acp.SessionUpdate) []*acp.SessionSessionInfoUpdate {
	var out []*acp.SessionSessionInfoUpdate
	for _, u := range ups {
		if u.SessionInfoUpdate != nil {
			out = append(out, u.SessionInfoUpdate)
		}
	}
	return out
}

// The first prompt titles the session: every attached editor hears the
// title with session_info_update before the prompt's answer, session/list
// shows it; each later turn's end tells the time of the last activity
// only.
func TestSessionTitleAndInfoUpdates(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)

	before := time.Now().Add(-time.Second)
	a.prompt(id, "Explain the\x1b[2J reaper\nin detail")
	infos := sessionInfos(a.updates())
	if len(infos) != 1 || infos[0].Title == nil || *infos[0].Title != "Explain the[2J reaper" || infos[0].UpdatedAt == nil {
		t.Fatalf("after the first prompt: session_info_updates %s", show(infos))
	}
	if at, err := time.Parse(time.RFC3339, *infos[0].UpdatedAt); err != nil || at.Before(before.Truncate(time.Second)) {
		t.Errorf("updatedAt %q: %v", *infos[0].UpdatedAt, err)
	}
	b.waitFor("the title in the other editor", func(ups []acp.SessionUpdate) bool {
		i := sessionInfos(ups)
		return len(i) == 1 && i[0].Title != nil
	})

	var list acp.ListSessionsResponse
	a.must(rpc.MethodSessionList, acp.ListSessionsRequest{Cwd: &td.root}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "Explain the[2J reaper" ||
		list.Sessions[0].UpdatedAt == nil || list.Sessions[0].Cwd != td.root {
		t.Fatalf("session/list: %+v", list)
	}

	a.forget()
	a.prompt(id, "and the spare sessions")
	infos = sessionInfos(a.updates())
	if len(infos) != 1 || infos[0].Title != nil || infos[0].UpdatedAt == nil {
		t.Fatalf("after the second prompt: %s", show(infos))
	}
	row, err := td.d.DB().Session(t.Context(), string(id))
	if err != nil || row.Title != "Explain the[2J reaper" {
		t.Errorf("stored title %q (%v)", row.Title, err)
	}
}

func show(infos []*acp.SessionSessionInfoUpdate) string {
	var b strings.Builder
	for _, i := range infos {
		fmt.Fprintf(&b, "{title %v updatedAt %v} ", deref(i.Title), deref(i.UpdatedAt))
	}
	return b.String()
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// A session opened and closed without a prompt is not listed: it has
// nothing to go back to (no turn, no title). Prompted, it is.
func TestSessionListLeavesOutUnprompted(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	left := ed.newSession(td.root)
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: left}, nil)
	used := ed.newSession(td.root)
	ed.prompt(used, "hello")
	var list acp.ListSessionsResponse
	ed.must(rpc.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != used {
		t.Errorf("session/list: %+v; want only the prompted session %s", list.Sessions, used)
	}
	// Still stored: an editor that kept its id may load it.
	ed.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: left, Cwd: td.root, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
}

// session/list pages through the sessions with nextCursor, most recent
// first, each once, filtered by cwd; a cursor hearth did not give and a
// relative cwd are refused as invalid params.
func TestSessionListPages(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	db := td.d.DB()
	base := time.Now().Add(-time.Hour)
	const n = listPage + 7
	for i := range n {
		s := store.Session{ID: fmt.Sprintf("ses_%03d", i), Root: td.root, Title: fmt.Sprintf("task %d", i),
			Created: base.Add(time.Duration(i/2) * time.Second)} // pairs share a time
		if err := db.CreateSession(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	if err := db.CreateSession(t.Context(), store.Session{ID: "ses_other", Root: other, Title: "elsewhere", Created: base}); err != nil {
		t.Fatal(err)
	}
	ed := td.connect()
	ed.initialize()

	page := func(cwd string, cursor *string) acp.ListSessionsResponse {
		t.Helper()
		req := acp.ListSessionsRequest{Cursor: cursor}
		if cwd != "" {
			req.Cwd = &cwd
		}
		var r acp.ListSessionsResponse
		ed.must(rpc.MethodSessionList, req, &r)
		return r
	}
	all := func(cwd string) []acp.SessionInfo {
		var out []acp.SessionInfo
		var cursor *string
		for range 10 {
			r := page(cwd, cursor)
			if len(r.Sessions) > listPage {
				t.Fatalf("a page of %d", len(r.Sessions))
			}
			out = append(out, r.Sessions...)
			if cursor = r.NextCursor; cursor == nil {
				return out
			}
		}
		t.Fatal("paging does not end")
		return nil
	}

	first := page(td.root, nil)
	if len(first.Sessions) != listPage || first.NextCursor == nil {
		t.Fatalf("first page: %d sessions, next %v", len(first.Sessions), first.NextCursor)
	}
	got := all(td.root)
	if len(got) != n {
		t.Fatalf("%d sessions over the pages, want %d", len(got), n)
	}
	// Most recent first; the two sessions of a pair by id.
	var want []string
	for k := (n - 1) / 2; k >= 0; k-- {
		for i := 2 * k; i < min(2*k+2, n); i++ {
			want = append(want, fmt.Sprintf("ses_%03d", i))
		}
	}
	for i, s := range got {
		if string(s.SessionId) != want[i] {
			t.Fatalf("entry %d is %s, want %s", i, s.SessionId, want[i])
		}
		var num int
		fmt.Sscanf(want[i], "ses_%d", &num)
		if s.Title == nil || *s.Title != fmt.Sprintf("task %d", num) || s.UpdatedAt == nil || s.Cwd != td.root {
			t.Fatalf("entry %d: %+v", i, s)
		}
	}
	if everything := all(""); len(everything) != n+1 {
		t.Errorf("without cwd: %d sessions, want %d", len(everything), n+1)
	}

	for _, bad := range []acp.ListSessionsRequest{{Cursor: ptr("nonsense")}, {Cursor: ptr(encodeCursor(store.SessionPos{ID: "x"})[1:])}, {Cwd: ptr("relative/dir")}} {
		err := ed.call(rpc.MethodSessionList, bad, nil)
		if rpc.WireError(err).Code != -32602 {
			t.Errorf("session/list %+v: %v, want invalid params", bad, err)
		}
	}
}

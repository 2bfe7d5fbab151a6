package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestEnsureWorkspaceIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a, err := db.EnsureWorkspace(ctx, "/src/a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.EnsureWorkspace(ctx, "/src/a")
	if err != nil {
		t.Fatal(err)
	}
	if again != a {
		t.Errorf("second EnsureWorkspace = %+v, want %+v", again, a)
	}
	b, err := db.EnsureWorkspace(ctx, "/src/b")
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == a.ID {
		t.Error("two roots share a workspace id")
	}
	if _, err := db.EnsureWorkspace(ctx, ""); err == nil {
		t.Error("empty root accepted")
	}
}

func TestSessionRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	w, err := db.EnsureWorkspace(ctx, "/src/app")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("X", 3600))
	in := Session{ID: "s1", WorkspaceID: w.ID, Mode: "ask", Model: "gpt-x", Title: "Fix the build", Created: created}
	if err := db.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	s, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "s1" || s.WorkspaceID != w.ID || s.Root != "/src/app" || s.Mode != "ask" ||
		s.Model != "gpt-x" || s.Title != "Fix the build" {
		t.Errorf("Session = %+v", s)
	}
	if !s.Created.Equal(created) || !s.Updated.Equal(created) || s.Created.Location() != time.UTC {
		t.Errorf("times = %v / %v, want %v in UTC", s.Created, s.Updated, created)
	}

	if err := db.CreateSession(ctx, in); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate id: %v, want ErrExists", err)
	}
	if err := db.CreateSession(ctx, Session{ID: "s2", WorkspaceID: 999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown workspace: %v, want ErrNotFound", err)
	}

	if err := db.SetSessionTitle(ctx, "s1", "Renamed"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSessionMode(ctx, "s1", "code"); err != nil {
		t.Fatal(err)
	}
	s, err = db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Renamed" || s.Mode != "code" || !s.Updated.After(created) {
		t.Errorf("after updates: %+v", s)
	}

	// A chosen model is the session's model; choosing none again keeps it.
	if s.ChosenModel != "" || s.ChosenEffort != "" {
		t.Errorf("nothing chosen yet: %q, %q", s.ChosenModel, s.ChosenEffort)
	}
	for _, ch := range []struct{ model, effort, wantModel string }{
		{"o3", "high", "o3"},
		{"", "low", "o3"},
	} {
		if err := db.SetSessionChoice(ctx, "s1", ch.model, ch.effort); err != nil {
			t.Fatal(err)
		}
		if s, err = db.Session(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if s.ChosenModel != ch.model || s.ChosenEffort != ch.effort || s.Model != ch.wantModel {
			t.Errorf("after SetSessionChoice(%q, %q): chosen %q, %q; model %q", ch.model, ch.effort, s.ChosenModel, s.ChosenEffort, s.Model)
		}
	}
}

func TestSessionNotFound(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	checks := map[string]error{}
	_, checks["Session"] = db.Session(ctx, "nope")
	checks["SetSessionTitle"] = db.SetSessionTitle(ctx, "nope", "t")
	checks["SetSessionMode"] = db.SetSessionMode(ctx, "nope", "m")
	checks["SetSessionChoice"] = db.SetSessionChoice(ctx, "nope", "o3", "")
	checks["DeleteSession"] = db.DeleteSession(ctx, "nope")
	_, checks["BeginTurn"] = db.Items().BeginTurn(ctx, "nope")
	checks["EndTurn"] = db.Items().EndTurn(ctx, 42, TurnCompleted, "", "")
	_, checks["Requests.Insert"] = db.Requests().Insert(ctx, Request{SessionID: "nope", Kind: KindFull})
	checks["Requests.Finish"] = db.Requests().Finish(ctx, 42, "", RequestCompleted, "", time.Time{}, time.Time{})
	checks["SetSeen"] = db.Memory().SetSeen(ctx, "nope", "a.go", Seen{Hash: "h"})
	for name, err := range checks {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

func TestSessionsOrderAndFilter(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	base := time.Now().Add(-10 * time.Hour)
	for i, s := range []Session{
		{ID: "a1", Root: "/src/a", Created: base},
		{ID: "a2", Root: "/src/a", Created: base.Add(time.Hour)},
		{ID: "b1", Root: "/src/b", Created: base.Add(2 * time.Hour)},
	} {
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	ids := func(root string, limit int) []string {
		t.Helper()
		list, err := db.Sessions(ctx, root, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	check("all", ids("", 0), "b1", "a2", "a1")
	check("root a", ids("/src/a", 0), "a2", "a1")
	check("limit 2", ids("", 2), "b1", "a2")
	check("unknown root", ids("/src/none", 0))

	// A turn in a1 makes it the most recent.
	turn, err := db.Items().BeginTurn(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Items().EndTurn(ctx, turn.ID, TurnCompleted, "end_turn", ""); err != nil {
		t.Fatal(err)
	}
	check("after turn", ids("", 0), "a1", "b1", "a2")
	// An item in a2 (outside any turn) is activity too.
	if _, err := db.Items().Append(ctx, "a2", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	check("after item", ids("", 0), "a2", "a1", "b1")

	list, err := db.Sessions(ctx, "/src/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if list[1].ID != "a1" || list[1].Turns != 1 || list[1].Root != "/src/a" || list[0].Turns != 0 {
		t.Errorf("summaries = %+v", list)
	}
	if list[1].LastActivity.Before(list[1].Updated) {
		t.Errorf("a1 last activity %v before its update %v", list[1].LastActivity, list[1].Updated)
	}
}

func TestDeleteSessionCascades(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "keep")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Items().Append(ctx, "s1", turn.ID, []NewItem{{Origin: OriginInput, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Requests().Insert(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindFull}); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().SetSeen(ctx, "s1", "main.go", Seen{Hash: "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.reader.QueryRow(`SELECT
		(SELECT count(*) FROM turns) + (SELECT count(*) FROM items) +
		(SELECT count(*) FROM requests) + (SELECT count(*) FROM read_set)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows left after deleting the session", n)
	}
	if _, err := db.Session(ctx, "keep"); err != nil {
		t.Errorf("other session: %v", err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// A prefix finds the ids that begin with it, exactly: "_" and "%" are
// themselves, case counts, and "" matches nothing.
func TestSessionIDsWithPrefix(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for _, id := range []string{"ses_ab12", "ses_ab34", "ses_cd56", "sesXab", "ses%1", "SES_ab99"} {
		if err := db.CreateSession(ctx, Session{ID: id, Root: "/src/app"}); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string][]string{
		"ses_ab":   {"ses_ab12", "ses_ab34"},
		"ses_c":    {"ses_cd56"},
		"ses_ab12": {"ses_ab12"},
		"ses%":     {"ses%1"},
		"ses_":     {"ses_ab12", "ses_ab34", "ses_cd56"},
		"ses_zz":   nil,
		"":         nil,
	} {
		got, err := db.SessionIDsWithPrefix(ctx, prefix, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("SessionIDsWithPrefix(%q) = %q, want %q", prefix, got, want)
		}
	}
	if got, _ := db.SessionIDsWithPrefix(ctx, "ses_", 2); len(got) != 2 {
		t.Errorf("limit 2: %q", got)
	}
}

// A spare session is not listed until taken; DeleteSpares removes only
// spares, with what they hold.
func TestSpareSessions(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for _, s := range []Session{{ID: "spare1", Root: "/src/app", Spare: true}, {ID: "spare2", Root: "/src/app", Spare: true}, {ID: "mine", Root: "/src/app"}} {
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Items().Append(ctx, "spare2", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	list := func() (ids []string) {
		ss, err := db.Sessions(ctx, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := list(); !slices.Equal(got, []string{"mine"}) {
		t.Fatalf("listed %v, want only mine", got)
	}
	if ids, _ := db.SessionIDsWithPrefix(ctx, "spare", 0); len(ids) != 0 {
		t.Errorf("prefix lookup found spares %v", ids)
	}
	if err := db.TakeSpare(ctx, "spare1"); err != nil {
		t.Fatal(err)
	}
	if err := db.TakeSpare(ctx, "mine"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TakeSpare of a session that is no spare: %v", err)
	}
	if got := list(); !slices.Equal(got, []string{"mine", "spare1"}) {
		t.Fatalf("after taking spare1: %v", got)
	}
	if n, err := db.DeleteSpares(ctx); err != nil || n != 1 {
		t.Fatalf("DeleteSpares: %d, %v", n, err)
	}
	if _, err := db.Session(ctx, "spare2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("spare2 survived: %v", err)
	}
	if items, _ := db.Items().List(ctx, "spare2"); len(items) != 0 {
		t.Errorf("spare2's items survived")
	}
}

// Pages resumed after the last entry of the previous one cover every
// session once, in Sessions' order, ties in activity broken by id.
func TestSessionsAfterPages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	base := time.Now().Add(-time.Hour)
	var want []string
	for i := range 7 {
		// Three share one time: the page boundary falls among them.
		at := base.Add(time.Duration(min(i, 4)) * time.Minute)
		id := fmt.Sprintf("s%d", i)
		if err := db.CreateSession(ctx, Session{ID: id, Root: "/src/a", Created: at}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := db.Sessions(ctx, "/src/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		want = append(want, s.ID)
	}
	if !slices.Equal(want, []string{"s4", "s5", "s6", "s3", "s2", "s1", "s0"}) {
		t.Fatalf("order %v", want)
	}
	var got []string
	var pos *SessionPos
	for pages := 0; ; pages++ {
		page, err := db.SessionsAfter(ctx, "/src/a", pos, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		for _, s := range page {
			got = append(got, s.ID)
		}
		last := page[len(page)-1]
		pos = &SessionPos{LastActivity: last.LastActivity, ID: last.ID}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages gave %v, want %v", got, want)
	}
}

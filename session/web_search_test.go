package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
)

// searchRecorder is a recorder that shows web searches (session.SearchSink).
type searchRecorder struct {
	*recorder
	mu       sync.Mutex
	searches []session.WebSearch
	begun    []bool
}

func (r *searchRecorder) WebSearch(ws session.WebSearch, begun bool) {
	r.mu.Lock()
	r.searches = append(r.searches, ws)
	r.begun = append(r.begun, begun)
	r.mu.Unlock()
}

// withSearch offers the hosted web search beside the workspace's tools.
type withSearch struct{ *wsTools }

func (w withSearch) Specs() []json.RawMessage {
	return append(append([]json.RawMessage(nil), w.wsTools.Specs()...), json.RawMessage(`{"type":"web_search","external_web_access":false}`))
}

// The model's web search reaches a SearchSink as it is announced and when
// it is done, with its query; the turn ends on the answer that follows it
// (hearth runs nothing for it). Under store:false a full request sends the
// item back without its id and with its status, and the simulator, which
// checks the item as the API does, accepts it.
func TestWebSearchShownAndReplayed(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{DisableIncremental: true})
	c := e.openWith("s1", withSearch{e.tools})
	rec := &searchRecorder{recorder: newRecorder()}
	stop, err := c.Prompt(t.Context(), []json.RawMessage{session.UserMessage("search sqlite wal mode")}, rec)
	if err != nil || stop != session.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	if !strings.Contains(rec.Text_(), `for "sqlite wal mode"`) {
		t.Errorf("answer %q", rec.Text_())
	}
	rec.mu.Lock()
	got, begun := rec.searches, rec.begun
	rec.mu.Unlock()
	if len(got) != 2 || !begun[0] || begun[1] || got[0].Status != "in_progress" || got[0].Query != "" || !strings.HasPrefix(got[0].ID, "ws_") ||
		got[1].ID != got[0].ID || got[1].Status != "completed" || got[1].Action != "search" || got[1].Query != "sqlite wal mode" {
		t.Fatalf("searches shown: %+v", got)
	}
	if got[1].Title() != "Search the web: sqlite wal mode" {
		t.Errorf("title %q", got[1].Title())
	}
	if stop, err := c.Prompt(t.Context(), []json.RawMessage{session.UserMessage("thanks")}, rec); err != nil || stop != session.StopEndTurn {
		t.Fatalf("second prompt: %v %v", stop, err)
	}
	recs := e.wait(len(e.sim.Received()))
	last := recs[len(recs)-1]
	if last.PreviousResponseID != "" || last.ResponseID == "" || last.Outcome != last.ResponseID {
		t.Fatalf("the second turn's request: previous %q, outcome %q", last.PreviousResponseID, last.Outcome)
	}
	var replayed json.RawMessage
	for _, it := range last.Input {
		if bytes.Contains(it, []byte(`"web_search_call"`)) {
			replayed = it
		}
	}
	want := `{"type":"web_search_call","status":"completed","action":{"type":"search","query":"sqlite wal mode"}}`
	var a, b any
	json.Unmarshal(replayed, &a)
	json.Unmarshal([]byte(want), &b)
	if !jsonEqual(a, b) {
		t.Errorf("the search went back as %s, want %s", replayed, want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Each action of a web_search_call reads as what the editor is shown.
func TestReadWebSearch(t *testing.T) {
	for _, tc := range []struct{ item, title, query string }{
		{`{"type":"web_search_call","id":"ws_1","status":"in_progress"}`, "Search the web", ""},
		{`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go  1.26\nnotes"}}`, "Search the web: go 1.26 notes", "go  1.26\nnotes"},
		{`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","queries":["a","b"]}}`, "Search the web: a; b", "a; b"},
		{`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"open_page","url":"https://go.dev/doc"}}`, "Open https://go.dev/doc", "https://go.dev/doc"},
		{`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"find_in_page","url":"https://go.dev","pattern":"wal"}}`, "Find wal in https://go.dev", "wal"},
	} {
		ws, ok := session.ReadWebSearch(json.RawMessage(tc.item))
		if !ok || ws.ID != "ws_1" || ws.Title() != tc.title || ws.Query != tc.query {
			t.Errorf("%s: %+v %v, title %q", tc.item, ws, ok, ws.Title())
		}
	}
	for _, item := range []string{`{"type":"message","content":"web_search_call"}`, `{"type":"function_call","name":"web_search_call"}`, `not json "web_search_call"`} {
		if _, ok := session.ReadWebSearch(json.RawMessage(item)); ok {
			t.Errorf("%s read as a web search", item)
		}
	}
}

// A response lost in the middle of a search ends that search for the
// editor (failed) rather than leaving it running; the retry searches again.
func TestWebSearchFailsWithItsResponse(t *testing.T) {
	e := newEnv(t, sim.Options{Reasoning: sim.ReasoningNever}, session.Config{ReasoningEffort: "none"})
	c := e.openWith("s1", withSearch{e.tools})
	warm(t, c)
	generating := func(r sim.Received) bool { return r.Generate == nil || *r.Generate }
	// created, in_progress, the item added, its in_progress: then the close.
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultCloseMidResponse, AfterEvents: 4, CloseCode: sim.CloseAbrupt, Match: generating})
	rec := &searchRecorder{recorder: newRecorder()}
	if stop, err := c.Prompt(t.Context(), []json.RawMessage{session.UserMessage("search sqlite wal mode")}, rec); err != nil || stop != session.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var shown []string
	for i, ws := range rec.searches {
		shown = append(shown, fmt.Sprintf("%s %s %v", ws.ID, ws.Status, rec.begun[i]))
	}
	if len(rec.searches) != 4 || rec.searches[1].ID != rec.searches[0].ID || rec.searches[1].Status != "failed" || rec.begun[1] ||
		rec.searches[3].ID != rec.searches[2].ID || rec.searches[3].Status != "completed" || rec.searches[2].ID == rec.searches[0].ID {
		t.Errorf("searches shown:\n%s", strings.Join(shown, "\n"))
	}
}

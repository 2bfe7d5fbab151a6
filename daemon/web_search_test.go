package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// searchSpec is the hosted web search a request offers: "" for none.
func searchSpec(t *testing.T, r sim.Received) string {
	t.Helper()
	var tools []json.RawMessage
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatalf("tools %s: %v", r.Tools, err)
	}
	for _, tool := range tools {
		if bytes.HasPrefix(tool, []byte(`{"type":"web_search"`)) {
			return string(tool)
		}
	}
	return ""
}

// searchCalls are the tool calls of kind search the editor was shown,
// by id: the last title and status each got.
func searchCalls(ups []acp.SessionUpdate) map[acp.ToolCallId][2]string {
	calls := map[acp.ToolCallId][2]string{}
	for _, u := range ups {
		if c := u.ToolCall; c != nil && c.Kind == acp.ToolKindSearch {
			calls[c.ToolCallId] = [2]string{c.Title, string(c.Status)}
		}
		if c := u.ToolCallUpdate; c != nil {
			if got, ok := calls[c.ToolCallId]; ok {
				if c.Title != nil {
					got[0] = *c.Title
				}
				if c.Status != nil {
					got[1] = string(*c.Status)
				}
				calls[c.ToolCallId] = got
			}
		}
	}
	return calls
}

// A codex model's session offers the hosted web search (cached by default,
// as the official schema takes it); the model's search reaches the editor
// as a tool call of kind search, titled with its query, and shows again on
// session/load. After a restart the session's requests are full, under
// store:false: the search goes back without its id and with its status,
// and the simulator, which checks it as the API does, takes it.
func TestWebSearchOfferedShownAndReplayed(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if stop := e.prompt(id, "search sqlite wal mode"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := td.waitRequests(len(td.sim.Received()))
	for _, r := range recs {
		if got := searchSpec(t, r); got != `{"type":"web_search","external_web_access":false}` {
			t.Fatalf("request tools offer %q, want the cached web search", got)
		}
	}
	rs, err := apischema.Responses("ResponsesClientEventResponseCreate")
	if err != nil {
		t.Fatal(err)
	}
	if err := apischema.Validate(rs, recs[len(recs)-1].Raw); err != nil {
		t.Errorf("the request is not valid under the official schema: %v", err)
	}
	if got := agentText(e.updates()); !strings.Contains(got, `I searched the web (the search index (cached)) for "sqlite wal mode"`) {
		t.Errorf("answer %q", got)
	}
	want := [2]string{"Search the web: sqlite wal mode", "completed"}
	calls := searchCalls(e.updates())
	if len(calls) != 1 {
		t.Fatalf("search calls shown: %v", calls)
	}
	for _, got := range calls {
		if got != want {
			t.Errorf("the search showed as %v, want %v", got, want)
		}
	}

	other := td.connect()
	other.initialize()
	other.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if replayed := searchCalls(other.updates()); len(replayed) != 1 || !sameCalls(replayed, calls) {
		t.Errorf("session/load showed %v, live %v", replayed, calls)
	}

	td.d.Close()
	td.restart()
	e = td.connect()
	e.initialize()
	e.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	before := len(td.sim.Received())
	if stop := e.prompt(id, "thanks"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop after the restart %s", stop)
	}
	recs = td.waitRequests(len(td.sim.Received()))
	full := false
	for _, r := range recs[before:] {
		if r.Outcome != r.ResponseID {
			t.Errorf("a request after the restart was refused: %s", r.Outcome)
		}
		for _, it := range r.Input {
			if bytes.Contains(it, []byte(`"web_search_call"`)) {
				full = true
				if bytes.Contains(it, []byte(`"id"`)) || !bytes.Contains(it, []byte(`"status":"completed"`)) {
					t.Errorf("the search went back as %s", it)
				}
			}
		}
	}
	if !full {
		t.Error("no request after the restart sent the search back")
	}
}

func sameCalls(a, b map[acp.ToolCallId][2]string) bool {
	for id, v := range a {
		if b[id] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// HEARTH_WEB_SEARCH=off offers no web search, and the model cannot search;
// live gives live pages where the mode's commands have the network (ask)
// and the index elsewhere (full-auto), the tool list changing with the
// mode; a model without a profile that knows the hosted tool gets none.
func TestWebSearchByConfigurationAndMode(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex"; c.WebSearch = WebSearchOff })
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	e.prompt(id, "search sqlite wal mode")
	for _, r := range td.waitRequests(len(td.sim.Received())) {
		if got := searchSpec(t, r); got != "" {
			t.Errorf("off: a request offers %s", got)
		}
	}
	if got := agentText(e.updates()); !strings.HasPrefix(got, "You said: search sqlite wal mode") {
		t.Errorf("off: answer %q", got)
	}

	td = startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex"; c.WebSearch = WebSearchLive })
	e = td.connect()
	e.initialize()
	id = e.newSession(td.root)
	e.prompt(id, "search sqlite wal mode")
	recs := td.waitRequests(len(td.sim.Received()))
	if got := searchSpec(t, recs[len(recs)-1]); got != `{"type":"web_search","external_web_access":true}` {
		t.Errorf("live in ask mode: %s", got)
	}
	if got := agentText(e.updates()); !strings.Contains(got, "(live pages)") {
		t.Errorf("live: answer %q", got)
	}
	e.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	e.prompt(id, "search again")
	recs = td.waitRequests(len(td.sim.Received()))
	if got := searchSpec(t, recs[len(recs)-1]); got != `{"type":"web_search","external_web_access":false}` {
		t.Errorf("live in full-auto: %s", got)
	}

	td = startDaemon(t, sim.Options{}, "") // sim-model: no profile
	e = td.connect()
	e.initialize()
	e.prompt(e.newSession(td.root), "search sqlite wal mode")
	for _, r := range td.waitRequests(len(td.sim.Received())) {
		if got := searchSpec(t, r); got != "" {
			t.Errorf("a model without a profile is offered %s", got)
		}
	}
}

// view_image puts a workspace image into the next request as an
// input_image of the call's output; a path that is no image, or outside
// the workspace, is a failed call that says why.
func TestViewImageTool(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	shot := pngImage(t, 5, 3)
	if err := os.WriteFile(filepath.Join(td.root, "shot.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if stop := e.prompt(id, "view shot.png"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if got := agentText(e.updates()); !strings.Contains(got, "I called view_image 1 time(s)") || !strings.Contains(got, "[saw 1 image: image/png 5x3") {
		t.Errorf("answer %q", got)
	}
	recs := td.waitRequests(len(td.sim.Received()))
	if !strings.Contains(string(recs[len(recs)-1].Raw), `{"type":"input_image","image_url":"data:image/png;base64,`) {
		t.Error("the request after view_image carries no input_image")
	}
	if got := toolImages(e.updates()); len(got) != 1 {
		t.Errorf("the editor was shown %d images", len(got))
	}

	for _, tc := range []struct{ path, want string }{
		{"a.txt", "a.txt: not a PNG, JPEG, GIF or WebP image"},
		{"../outside.png", "outside the workspace"},
	} {
		e.forget()
		e.prompt(id, "view "+tc.path)
		if out := lastToolOutput(t, td); !strings.Contains(out, tc.want) {
			t.Errorf("view %s: the model got %q, want %q", tc.path, out, tc.want)
		}
		if st := toolUpdates(e.updates()); !hasStatus(st, acp.ToolCallStatusFailed) {
			t.Errorf("view %s: the call did not fail: %v", tc.path, st)
		}
	}
}

func hasStatus(m map[acp.ToolCallId]acp.ToolCallStatus, st acp.ToolCallStatus) bool {
	for _, s := range m {
		if s == st {
			return true
		}
	}
	return false
}

func TestWebSearchIn(t *testing.T) {
	for _, tc := range []struct{ setting, shell, mode, want string }{
		{WebSearchCached, NetworkMode, ModeAsk, WebSearchCached},
		{WebSearchCached, NetworkMode, ModeFullAuto, WebSearchCached},
		{WebSearchOff, NetworkMode, ModeAsk, ""},
		{WebSearchLive, NetworkMode, ModeAsk, WebSearchLive},
		{WebSearchLive, NetworkMode, ModeAutoEdit, WebSearchLive},
		{WebSearchLive, NetworkMode, ModeFullAuto, WebSearchCached},
		{WebSearchLive, NetworkMode, ModeReadOnly, WebSearchCached},
		{WebSearchLive, NetworkOn, ModeFullAuto, WebSearchLive},
		{WebSearchLive, NetworkOff, ModeAsk, WebSearchCached},
		{"", NetworkMode, ModeAsk, WebSearchCached},
	} {
		if got := webSearchIn(tc.setting, tc.shell, tc.mode); got != tc.want {
			t.Errorf("webSearchIn(%q, %q, %q) = %q, want %q", tc.setting, tc.shell, tc.mode, got, tc.want)
		}
	}
	for _, v := range []string{"", " cached", "live", "off"} {
		if _, err := parseWebSearch(v); err != nil {
			t.Errorf("parseWebSearch(%q): %v", v, err)
		}
	}
	if _, err := parseWebSearch("on"); err == nil || !strings.Contains(err.Error(), "HEARTH_WEB_SEARCH") {
		t.Errorf("parseWebSearch(on) = %v", err)
	}
}

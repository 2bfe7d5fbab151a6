package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var cachedSearch = map[string]any{"type": "web_search", "external_web_access": false}

// "search QUERY" with the hosted web search offered: the response streams a
// web_search_call as the API does (announced, three progress events, done
// with its action), then a message citing the page found; the search says
// whether it was live or cached, and the sources come only when included.
func TestWebSearchEvents(t *testing.T) {
	_, base := newSim(t, Options{Reasoning: ReasoningNever})
	c := dial(t, base)
	tools := []any{fnTool("read_file"), cachedSearch}
	evs := c.create(map[string]any{"tools": tools, "input": []any{userMsg("search go 1.26 release notes")}})
	var got []string
	for _, e := range evs[:8] {
		got = append(got, e.Type)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.web_search_call.in_progress", "response.web_search_call.searching", "response.web_search_call.completed",
		"response.output_item.done", "response.output_item.added"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	var added, done struct {
		Item map[string]any `json:"item"`
	}
	json.Unmarshal(evs[2].raw, &added)
	json.Unmarshal(evs[6].raw, &done)
	if added.Item["status"] != "in_progress" || added.Item["action"] != nil || !strings.HasPrefix(added.Item["id"].(string), "ws_") {
		t.Errorf("added %s", evs[2].raw)
	}
	action, _ := done.Item["action"].(map[string]any)
	if done.Item["status"] != "completed" || action["type"] != "search" || action["query"] != "go 1.26 release notes" || action["sources"] != nil {
		t.Errorf("done %s", evs[6].raw)
	}
	if !strings.Contains(string(evs[4].raw), `"item_id":"`+added.Item["id"].(string)+`"`) {
		t.Errorf("searching event without the item's id: %s", evs[4].raw)
	}
	text := textOf(evs)
	if text != `I searched the web (the search index (cached)) for "go 1.26 release notes". The best source: [About go 1.26 release notes](https://example.com/search/go-1.26-release-notes).` {
		t.Errorf("answer %q", text)
	}
	r := completed(t, evs)
	if len(r.Output) != 2 {
		t.Fatalf("output %s", r.Output)
	}

	// Live, with the sources included; no web search offered: an echo.
	live := map[string]any{"type": "web_search"}
	evs = c.create(map[string]any{"tools": []any{live}, "include": []string{"web_search_call.action.sources"},
		"input": []any{userMsg("search weather")}})
	if !strings.Contains(string(evs[6].raw), `"sources":[{"type":"url","url":"https://example.com/search/weather"}]`) ||
		!strings.Contains(textOf(evs), "(live pages)") {
		t.Errorf("live search with sources: %s / %q", evs[6].raw, textOf(evs))
	}
	if got := textOf(c.create(map[string]any{"tools": []any{fnTool("read_file")}, "input": []any{userMsg("search weather")}})); got != "You said: search weather" {
		t.Errorf("without the tool: %q", got)
	}
}

// The hosted tool's spec is checked as the API checks it: its own fields
// only, of their types and values; and refused at reasoning effort minimal.
func TestWebSearchToolShape(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	cases := []struct {
		tool       any
		effort     string
		code, para string // "" = accepted
	}{
		{cachedSearch, "", "", ""},
		{map[string]any{"type": "web_search_2025_08_26"}, "low", "", ""},
		{map[string]any{"type": "web_search", "search_context_size": "high", "filters": map[string]any{"allowed_domains": []string{"go.dev"}},
			"user_location": map[string]any{"type": "approximate", "country": "FR", "city": nil}}, "", "", ""},
		{map[string]any{"type": "web_search", "external_web_access": true, "search_content_types": []string{"text", "image"}}, "", "", ""},
		{map[string]any{"type": "web_search", "search_content_types": []string{"video"}}, "", "invalid_value", "tools[1].search_content_types[0]"},
		{map[string]any{"type": "web_search", "external_web_access": "no"}, "", "invalid_type", "tools[1].external_web_access"},
		{map[string]any{"type": "web_search", "max_results": 3}, "", "unknown_parameter", "tools[1].max_results"},
		{map[string]any{"type": "web_search", "search_context_size": "huge"}, "", "invalid_value", "tools[1].search_context_size"},
		{map[string]any{"type": "web_search", "filters": map[string]any{"blocked_domains": []string{}}}, "", "unknown_parameter", "tools[1].filters.blocked_domains"},
		{map[string]any{"type": "web_search", "user_location": map[string]any{"type": "exact"}}, "", "invalid_value", "tools[1].user_location.type"},
		{cachedSearch, "minimal", "", "tools"},
	}
	for i, tc := range cases {
		req := map[string]any{"tools": []any{fnTool("read_file"), tc.tool}, "input": "hi"}
		if tc.effort != "" {
			req["reasoning"] = map[string]any{"effort": tc.effort}
		}
		e := last(c.create(req))
		if tc.para == "" {
			if e.Type != "response.completed" {
				t.Errorf("case %d refused: %s", i, e.raw)
			}
			continue
		}
		if e.Type != "error" || e.Status != 400 || e.Error == nil || e.Error.Code != tc.code || e.Error.Param == nil || *e.Error.Param != tc.para {
			t.Errorf("case %d: %s, want 400 %s on %s", i, e.raw, tc.code, tc.para)
		}
	}
	e := last(c.create(map[string]any{"tools": []any{cachedSearch}, "reasoning": map[string]any{"effort": "minimal"}, "input": "hi"}))
	if e.Error == nil || e.Error.Message != "The following tools cannot be used with reasoning.effort 'minimal': web_search." {
		t.Errorf("minimal: %s", e.raw)
	}
}

// A web_search_call sent back as input is checked as the API checks it:
// under store:false without its id, with its status and a valid action.
func TestWebSearchItemsReplayed(t *testing.T) {
	_, base := newSim(t, Options{Reasoning: ReasoningNever})
	c := dial(t, base)
	first := completed(t, c.create(map[string]any{"store": false, "tools": []any{cachedSearch}, "input": []any{userMsg("search sqlite wal")}}))
	var item map[string]any
	json.Unmarshal(first.Output[0], &item)
	replayed := map[string]any{"type": "web_search_call", "status": item["status"], "action": item["action"]}
	answer := map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "ok"}}}
	with := func(it map[string]any) []any {
		return []any{userMsg("search sqlite wal"), it, answer, userMsg("thanks")}
	}
	cases := []struct {
		item       map[string]any
		code, para string // "" with status 0 = accepted
		status     int
	}{
		{replayed, "", "", 0},
		{item, "", "input", 404},
		{map[string]any{"type": "web_search_call", "action": item["action"]}, "missing_required_parameter", "input[1].status", 400},
		{map[string]any{"type": "web_search_call", "status": "completed"}, "missing_required_parameter", "input[1].action", 400},
		{map[string]any{"type": "web_search_call", "status": "done", "action": item["action"]}, "invalid_value", "input[1].status", 400},
		{map[string]any{"type": "web_search_call", "status": "completed", "action": map[string]any{"type": "browse"}}, "invalid_value", "input[1].action.type", 400},
		{map[string]any{"type": "web_search_call", "status": "completed", "action": map[string]any{"type": "find_in_page", "url": "https://go.dev"}}, "missing_required_parameter", "input[1].action.pattern", 400},
		{map[string]any{"type": "web_search_call", "status": "completed", "action": item["action"], "results": []any{}}, "unknown_parameter", "input[1].results", 400},
	}
	for i, tc := range cases {
		e := last(c.create(map[string]any{"store": false, "tools": []any{cachedSearch}, "input": with(tc.item)}))
		if tc.status == 0 {
			if e.Type != "response.completed" {
				t.Errorf("case %d refused: %s", i, e.raw)
			}
			continue
		}
		if e.Type != "error" || e.Status != tc.status || e.Error == nil || e.Error.Code != tc.code || e.Error.Param == nil || *e.Error.Param != tc.para {
			t.Errorf("case %d: %s, want %d %s on %s", i, e.raw, tc.status, tc.code, tc.para)
		}
	}
}

// view PATH calls view_image when the request offers it.
func TestViewWord(t *testing.T) {
	p := planTurn(raws(t, userMsg("view docs/shot.png")), toolsJSON(t, fnTool("read_file"), fnTool("view_image")), true)
	if p.callName != "view_image" || p.callArgs != `{"path":"docs/shot.png"}` {
		t.Errorf("plan %+v", p)
	}
	if p := planTurn(raws(t, userMsg("view docs/shot.png")), toolsJSON(t, fnTool("read_file")), true); p.callName != "" {
		t.Errorf("without view_image: plan %+v", p)
	}
	for _, w := range []string{"view PATH", "search QUERY"} {
		if !strings.Contains(WordsHelp, w) {
			t.Errorf("the help does not name %q", w)
		}
	}
}

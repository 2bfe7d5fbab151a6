package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/hearthd/hearth/session/responses"
)

// The hosted web_search tool runs on the API's side, inside one response:
// the model's use of it is an output item, {type: "web_search_call", id,
// status, action}, that needs no answer from hearth. The agent loop only
// shows it (SearchSink) and keeps it in the transcript, from which it goes
// back as input like any output item (transcript.ReplayForm).

// WebSearch is what one web_search_call item says: a plain value read by
// ReadWebSearch.
type WebSearch struct {
	ID string // the item's id (ws_…): the editor's tool call id
	// Status is the item's: in_progress, searching, completed or failed.
	Status string
	// Action is what the model did: search, open_page or find_in_page;
	// "" while the item is only announced.
	Action string
	// Query is a search's query (its queries joined with "; "), the page
	// an open_page opened, or the pattern a find_in_page looked for.
	Query string
	URL   string // the page of an open_page or find_in_page
}

// ReadWebSearch reads a web_search_call item; false for any other item.
func ReadWebSearch(item json.RawMessage) (WebSearch, bool) {
	if !bytes.Contains(item, []byte(`"web_search_call"`)) {
		return WebSearch{}, false // nearly every item: no decode
	}
	var v struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		Status string `json:"status"`
		Action struct {
			Type    string   `json:"type"`
			Query   string   `json:"query"`
			Queries []string `json:"queries"`
			URL     string   `json:"url"`
			Pattern string   `json:"pattern"`
		} `json:"action"`
	}
	if json.Unmarshal(item, &v) != nil || v.Type != "web_search_call" {
		return WebSearch{}, false
	}
	ws := WebSearch{ID: v.ID, Status: v.Status, Action: v.Action.Type, URL: v.Action.URL}
	switch v.Action.Type {
	case "search":
		ws.Query = v.Action.Query
		if ws.Query == "" {
			ws.Query = strings.Join(v.Action.Queries, "; ")
		}
	case "open_page":
		ws.Query = v.Action.URL
	case "find_in_page":
		ws.Query = v.Action.Pattern
	}
	return ws, true
}

// Title is how an editor names the search: what was looked for, once the
// item says so.
func (ws WebSearch) Title() string {
	switch {
	case ws.Action == "open_page" && ws.URL != "":
		return "Open " + ws.URL
	case ws.Action == "find_in_page" && ws.Query != "":
		return "Find " + quoteTitle(ws.Query) + " in " + ws.URL
	case ws.Query != "":
		return "Search the web: " + quoteTitle(ws.Query)
	}
	return "Search the web"
}

// quoteTitle is q on one line, cut to 100 runes.
func quoteTitle(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if r := []rune(q); len(r) > 100 {
		q = string(r[:100]) + "…"
	}
	return q
}

// SearchSink is a Sink that shows the model's web searches. A turn's sink
// that implements it hears each web_search_call item when the response
// announces it (begun; Status in_progress, usually without its query) and
// when it ends: done (completed or failed, with what was looked for), or
// failed with its response.
type SearchSink interface {
	WebSearch(ws WebSearch, begun bool)
}

// searches are the web searches of one response that were announced and
// are not done yet: a response that fails or is cancelled ends them for the
// editor (failed) instead of leaving them running. Made per response by
// read.
type searches []WebSearch

// relay tells sink of a web_search_call that event e announces or ends;
// false when e is about something else.
func (s *searches) relay(e *responses.Event, sink Sink) bool {
	if e.Type != "response.output_item.added" && e.Type != "response.output_item.done" {
		return false
	}
	ws, ok := ReadWebSearch(e.Item)
	if !ok {
		return false
	}
	begun := e.Type == "response.output_item.added"
	if begun {
		if ws.Status != "failed" {
			ws.Status = "in_progress"
		}
		*s = append(*s, ws)
	} else {
		*s = slices.DeleteFunc(*s, func(o WebSearch) bool { return o.ID == ws.ID })
	}
	tellSearch(sink, ws, begun)
	return true
}

// fail tells sink that the searches still running failed with their
// response.
func (s searches) fail(sink Sink) {
	for _, ws := range s {
		ws.Status = "failed"
		tellSearch(sink, ws, false)
	}
}

// tellSearch tells sink of ws when it shows web searches.
func tellSearch(sink Sink, ws WebSearch, begun bool) {
	if a, ok := sink.(*attemptSink); ok {
		sink = a.Sink // a request's attempt: the turn's own sink is inside
	}
	if s, ok := sink.(SearchSink); ok {
		s.WebSearch(ws, begun)
	}
}

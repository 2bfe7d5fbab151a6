package daemon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session"
)

// The API's hosted web_search tool: offered by configuration
// (HEARTH_WEB_SEARCH), the session's mode and its model's profile, and
// shown to the editors as a tool call of kind search. The search itself
// runs on the API's side, inside a response: hearth neither runs nor
// answers it.

// HEARTH_WEB_SEARCH: what the hosted web search may reach.
const (
	WebSearchCached = "cached" // OpenAI's index only, no live fetch: the default
	WebSearchLive   = "live"   // live pages, where the session's commands have the network
	WebSearchOff    = "off"    // not offered
)

// parseWebSearch reads HEARTH_WEB_SEARCH ("" is cached).
func parseWebSearch(v string) (string, error) {
	switch v = strings.TrimSpace(v); v {
	case "":
		return WebSearchCached, nil
	case WebSearchCached, WebSearchLive, WebSearchOff:
		return v, nil
	}
	return "", fmt.Errorf("HEARTH_WEB_SEARCH=%q: want cached (the search engine's index, the default), live (pages fetched live, in the modes whose commands have the network) or off", v)
}

// webSearchIn is the web search a session of mode gets under setting
// (Config.WebSearch; "" is cached) and shellNet (Config.ShellNetwork):
// cached, live, or "" for none. Live search reaches any page, so a page can
// carry off what the model has read in its address: it is live only where
// the session's commands have the network too (shellNetwork), and cached
// elsewhere (full-auto and read-only by default), for the reason the shell
// has no network there. The search is the API's, not a command's: no mode
// asks about it.
func webSearchIn(setting, shellNet, mode string) string {
	switch setting {
	case WebSearchOff:
		return ""
	case WebSearchLive:
		if !shellNetwork(shellNet, mode).Off {
			return WebSearchLive
		}
	}
	return WebSearchCached
}

// The hosted tool's specs: fixed bytes, so that every request of a session
// carries the same (external_web_access false: the index only).
var (
	cachedSearchSpec = json.RawMessage(`{"type":"web_search","external_web_access":false}`)
	liveSearchSpec   = json.RawMessage(`{"type":"web_search","external_web_access":true}`)
)

// toolOffer is what a session's tool list holds beyond its workspace's and
// its MCP servers' tools, by its model and mode: view_image for a model
// that takes images, the hosted web search. A plain value, compared to
// rebuild the list only when it changes (the list's bytes change, and the
// next request is full).
type toolOffer struct {
	images bool
	search string // webSearchIn's: "", cached or live
}

// offer is the toolOffer of the session's next request: by its model (the
// session's choice), its reasoning effort (the API refuses the web search
// at minimal), its mode and the daemon's configuration.
func (t *sessionTools) offer() toolOffer {
	cfg := t.s.conv.Config()
	t.s.mu.Lock()
	mode := t.s.mode
	t.s.mu.Unlock()
	o := toolOffer{images: cfg.Profile.Images}
	if cfg.Profile.WebSearch && cfg.ReasoningEffort != "minimal" {
		dc := t.d.Config()
		o.search = webSearchIn(dc.WebSearch, dc.ShellNetwork, mode)
	}
	return o
}

// apply is specs (which it never changes) with the offer: view_image left
// out for a model that takes no images, the web search appended.
func (o toolOffer) apply(specs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(specs)+1)
	for _, s := range specs {
		if !o.images && isViewImageSpec(s) {
			continue
		}
		out = append(out, s)
	}
	switch o.search {
	case WebSearchCached:
		out = append(out, cachedSearchSpec)
	case WebSearchLive:
		out = append(out, liveSearchSpec)
	}
	return out
}

// isViewImageSpec reports whether spec is view_image's function spec.
func isViewImageSpec(spec json.RawMessage) bool {
	return strings.HasPrefix(string(spec), `{"type":"function","name":"view_image",`)
}

// WebSearch shows a web search as a tool call of kind search: begun when
// the response announces it, titled with what was looked for and ended
// when it is done (or failed with its response).
func (u updates) WebSearch(ws session.WebSearch, begun bool) {
	id := acp.ToolCallId(ws.ID)
	if begun {
		u.s.broadcastToolCall(acp.StartToolCall(id, ws.Title(), acp.WithStartKind(acp.ToolKindSearch),
			acp.WithStartStatus(acp.ToolCallStatusInProgress)), webSearchName)
		return
	}
	u.s.broadcast(acp.UpdateToolCall(id, acp.WithUpdateStatus(searchStatus(ws.Status)),
		acp.WithUpdateTitle(ws.Title()), acp.WithUpdateRawInput(searchInput(ws))), nil)
}

// searchStatus is the ACP status of a web_search_call's status.
func searchStatus(status string) acp.ToolCallStatus {
	switch status {
	case "completed":
		return acp.ToolCallStatusCompleted
	case "failed":
		return acp.ToolCallStatusFailed
	}
	return acp.ToolCallStatusInProgress
}

// searchInput is what the editor is shown as a web search's input.
func searchInput(ws session.WebSearch) map[string]string {
	in := map[string]string{}
	if ws.Action != "" {
		in["action"] = ws.Action
	}
	if ws.Action != "open_page" && ws.Query != "" {
		in["query"] = ws.Query
	}
	if ws.URL != "" {
		in["url"] = ws.URL
	}
	return in
}

// searchNotification is what session/load shows of a stored
// web_search_call: the tool call as the live updates left it.
func searchNotification(sessionID string, item json.RawMessage) (json.RawMessage, bool) {
	ws, ok := session.ReadWebSearch(item)
	if !ok || ws.ID == "" {
		return nil, false
	}
	u := acp.StartToolCall(acp.ToolCallId(ws.ID), ws.Title(), acp.WithStartKind(acp.ToolKindSearch),
		acp.WithStartStatus(searchStatus(ws.Status)), acp.WithStartRawInput(searchInput(ws)))
	return namedToolCall(sessionID, u, webSearchName)
}

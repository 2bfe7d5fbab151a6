package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The hosted web search (docs/SIMULATOR.md): a request's tool {type: "web_search"} (or its
// dated name web_search_2025_08_26) with the fields of the API's WebSearchTool and no others:
// external_web_access (boolean; absent means true, live pages), filters (null or
// {allowed_domains: null or [string]}), user_location (null or {type: "approximate",
// country, region, city, timezone}, each a string or null), search_context_size (low,
// medium or high) and search_content_types (text and image: not in the published schema, but
// the API takes it from Codex). Any other field is 400 unknown_parameter, a field of the wrong type
// invalid_type, a value outside its enum invalid_value; with reasoning.effort minimal the
// request is refused as the API refuses it ("The following tools cannot be used with
// reasoning.effort 'minimal': web_search.", param tools, code null).
//
// The model's search is an output item {type: "web_search_call", id: "ws_…", status,
// action}, streamed as output_item.added (status in_progress, no action yet),
// response.web_search_call.in_progress, .searching and .completed (each with item_id and
// output_index), then output_item.done with status completed and action {type: "search",
// query} (plus sources [{type: "url", url}] when include names
// web_search_call.action.sources). The same response goes on with a message that cites
// what was found. Sent back as input, the item must have a status (one of in_progress,
// searching, completed, failed) and an action of a known type (search, open_page,
// find_in_page; find_in_page with url and pattern), and no other member than id, type,
// status and action; under store:false its server-issued id refuses the request, as any
// item's does.

// webSearchTypes are the type names of the hosted web search tool.
var webSearchTypes = []string{"web_search", "web_search_2025_08_26"}

// checkHostedTool checks tool i of a request when it is the hosted web search; nil for
// another tool.
func checkHostedTool(i int, raw json.RawMessage) *apiError {
	if !bytes.Contains(raw, []byte(`"web_search`)) {
		return nil // every other tool: no second decode
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	var typ string
	if json.Unmarshal(fields["type"], &typ) != nil || !slices.Contains(webSearchTypes, typ) {
		return nil
	}
	at := "tools[" + strconv.Itoa(i) + "]"
	for _, name := range sortedKeys(fields) {
		v, p := fields[name], at+"."+name
		var e *apiError
		switch name {
		case "type":
		case "external_web_access":
			e = wantBool(p, v)
		case "filters":
			e = checkFilters(p, v)
		case "user_location":
			e = checkLocation(p, v)
		case "search_context_size":
			e = wantEnum(p, v, "low", "medium", "high")
		case "search_content_types":
			e = checkContentTypes(p, v)
		default:
			e = ptr(unknownParameter(p))
		}
		if e != nil {
			return e
		}
	}
	return nil
}

func checkFilters(at string, v json.RawMessage) *apiError {
	if isNull(v) {
		return nil
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(v, &f) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected an object.", at))
	}
	for _, name := range sortedKeys(f) {
		if name != "allowed_domains" {
			return ptr(unknownParameter(at + "." + name))
		}
		var domains []string
		if !isNull(f[name]) && json.Unmarshal(f[name], &domains) != nil {
			p := at + ".allowed_domains"
			return ptr(invalidRequest("invalid_type", p, "Invalid type for '%s': expected an array of strings.", p))
		}
	}
	return nil
}

// checkContentTypes checks search_content_types: text and image results. The API's published
// schema leaves it out of WebSearchTool, but the API takes it: Codex sends ["text", "image"]
// for the models whose results may hold images.
func checkContentTypes(at string, v json.RawMessage) *apiError {
	var types []json.RawMessage
	if json.Unmarshal(v, &types) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected an array of strings.", at))
	}
	for i, t := range types {
		if e := wantEnum(at+"["+strconv.Itoa(i)+"]", t, "text", "image"); e != nil {
			return e
		}
	}
	return nil
}

func checkLocation(at string, v json.RawMessage) *apiError {
	if isNull(v) {
		return nil
	}
	var l map[string]json.RawMessage
	if json.Unmarshal(v, &l) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected an object.", at))
	}
	for _, name := range sortedKeys(l) {
		p := at + "." + name
		switch name {
		case "type":
			if e := wantEnum(p, l[name], "approximate"); e != nil {
				return e
			}
		case "country", "region", "city", "timezone":
			var s string
			if !isNull(l[name]) && json.Unmarshal(l[name], &s) != nil {
				return ptr(invalidRequest("invalid_type", p, "Invalid type for '%s': expected a string.", p))
			}
		default:
			return ptr(unknownParameter(p))
		}
	}
	return nil
}

func wantBool(at string, v json.RawMessage) *apiError {
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected a boolean.", at))
	}
	return nil
}

// wantEnum checks that v is one of the strings values.
func wantEnum(at string, v json.RawMessage, values ...string) *apiError {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected a string.", at))
	}
	if !slices.Contains(values, s) {
		return ptr(invalidRequest("invalid_value", at, "Invalid value: '%s'. Supported values are: %s.", s, quotedList(values)))
	}
	return nil
}

// quotedList is 'a', 'b', and 'c', as the API lists supported values.
func quotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	if len(q) == 2 {
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

func ptr(e apiError) *apiError { return &e }

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// webSearchTool reads the request's hosted web search: ok when it offers one, live when
// that search may fetch pages (external_web_access absent or true).
func webSearchTool(tools json.RawMessage) (live, ok bool) {
	var list []struct {
		Type              string `json:"type"`
		ExternalWebAccess *bool  `json:"external_web_access"`
	}
	_ = json.Unmarshal(tools, &list)
	for _, t := range list {
		if slices.Contains(webSearchTypes, t.Type) {
			return t.ExternalWebAccess == nil || *t.ExternalWebAccess, true
		}
	}
	return false, false
}

// checkSearchEffort refuses the hosted web search at reasoning effort minimal, as the API
// does.
func checkSearchEffort(req *request) *apiError {
	if _, ok := webSearchTool(req.tools); !ok || req.reasoning.effort != "minimal" {
		return nil
	}
	return ptr(invalidRequest("", "tools", "The following tools cannot be used with reasoning.effort 'minimal': web_search."))
}

// checkSearchItem checks input item i when it is a web_search_call sent back: the members
// the API's item has, a known status and a valid action.
func checkSearchItem(i int, item json.RawMessage) *apiError {
	if !bytes.Contains(item, []byte(`"web_search_call"`)) {
		return nil // nearly every item: no decode
	}
	var fields map[string]json.RawMessage
	var typ string
	if json.Unmarshal(item, &fields) != nil || json.Unmarshal(fields["type"], &typ) != nil || typ != "web_search_call" {
		return nil
	}
	at := "input[" + strconv.Itoa(i) + "]"
	for _, name := range sortedKeys(fields) {
		switch name {
		case "id", "type", "status", "action":
		default:
			return ptr(unknownParameter(at + "." + name))
		}
	}
	for _, name := range []string{"status", "action"} {
		if v, ok := fields[name]; !ok || isNull(v) {
			return ptr(invalidRequest("missing_required_parameter", at+"."+name, "Missing required parameter: '%s.%s'.", at, name))
		}
	}
	if e := wantEnum(at+".status", fields["status"], "in_progress", "searching", "completed", "failed"); e != nil {
		return e
	}
	return checkSearchAction(at+".action", fields["action"])
}

// checkSearchAction checks a web_search_call's action.
func checkSearchAction(at string, v json.RawMessage) *apiError {
	var a map[string]json.RawMessage
	if json.Unmarshal(v, &a) != nil {
		return ptr(invalidRequest("invalid_type", at, "Invalid type for '%s': expected an object.", at))
	}
	if _, ok := a["type"]; !ok {
		return ptr(invalidRequest("missing_required_parameter", at+".type", "Missing required parameter: '%s.type'.", at))
	}
	if e := wantEnum(at+".type", a["type"], "search", "open_page", "find_in_page"); e != nil {
		return e
	}
	var typ string
	_ = json.Unmarshal(a["type"], &typ)
	if typ == "find_in_page" {
		for _, name := range []string{"url", "pattern"} {
			if _, ok := a[name]; !ok {
				return ptr(invalidRequest("missing_required_parameter", at+"."+name, "Missing required parameter: '%s.%s'.", at, name))
			}
		}
	}
	return nil
}

// searchResult is what the scripted model "finds" for a query: a page of its own at
// example.com, the same for the same query.
func searchResult(query string) (title, link string) {
	slug := strings.Join(strings.Fields(strings.ToLower(query)), "-")
	return "About " + query, "https://example.com/search/" + url.PathEscape(slug)
}

// searchAnswer is the text the scripted model answers with after searching: what it looked
// for, where (live pages or the index), and the page it cites.
func searchAnswer(query string, live bool) string {
	where := "the search index (cached)"
	if live {
		where = "live pages"
	}
	title, link := searchResult(query)
	return fmt.Sprintf("I searched the web (%s) for %q. The best source: [%s](%s).", where, query, title, link)
}

// streamSearch streams a web search of query: the item announced, the hosted tool's three
// progress events, then the item done with its action.
func (r *reply) streamSearch(ctx context.Context, index int, query string, sources bool) (json.RawMessage, error) {
	id := newID("ws")
	added := map[string]any{"type": "web_search_call", "id": id, "status": "in_progress"}
	if err := r.emit(ctx, "response.output_item.added", map[string]any{"output_index": index, "item": added}, false); err != nil {
		return nil, err
	}
	for _, step := range []string{"in_progress", "searching", "completed"} {
		if err := r.pause(ctx, r.cost.tokenGap()); err != nil {
			return nil, err
		}
		ev := map[string]any{"item_id": id, "output_index": index}
		if err := r.emit(ctx, "response.web_search_call."+step, ev, false); err != nil {
			return nil, err
		}
	}
	action := map[string]any{"type": "search", "query": query}
	if sources {
		_, link := searchResult(query)
		action["sources"] = []any{map[string]any{"type": "url", "url": link}}
	}
	done := map[string]any{"type": "web_search_call", "id": id, "status": "completed", "action": action}
	if err := r.emit(ctx, "response.output_item.done", map[string]any{"output_index": index, "item": done}, false); err != nil {
		return nil, err
	}
	return json.Marshal(done)
}

// hostedWords plans the plain words of the tools this file adds: "search QUERY" searches the
// web with the hosted tool (when the request offers it) and answers citing what it found;
// "view PATH" calls view_image (when offered). False otherwise.
func hostedWords(text string, names []string, tools json.RawMessage) (plan, bool) {
	if anyDirective.MatchString(text) {
		return plan{}, false
	}
	word, rest := cutWord(strings.TrimSpace(text))
	switch strings.ToLower(word) {
	case "search":
		live, ok := webSearchTool(tools)
		if q := strings.Join(strings.Fields(rest), " "); ok && q != "" {
			return plan{search: q, text: searchAnswer(q, live)}, true
		}
	case "view":
		if path, _ := cutWord(rest); path != "" && contains(names, "view_image") {
			b, _ := json.Marshal(map[string]string{"path": cleanPath(path)})
			return plan{callName: "view_image", callArgs: string(b), calls: 1}, true
		}
	}
	return plan{}, false
}

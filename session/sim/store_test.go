package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const notPersisted = "Item with id '%s' not found. Items are not persisted when `store` is set to false. " +
	"Try again with `store` set to true, or remove this item from your input."

// wantNotPersisted checks the real API's refusal of an id under store:false: 404, code null.
func wantNotPersisted(t *testing.T, e event, id string) {
	t.Helper()
	if e.Type != "error" || e.Error == nil || e.Status != 404 || e.Error.Type != "invalid_request_error" ||
		e.Error.Param == nil || *e.Error.Param != "input" || e.Error.Message != strings.Replace(notPersisted, "%s", id, 1) ||
		!strings.Contains(string(e.raw), `"code":null`) {
		t.Fatalf("got %s, want the 404 for %s", e.raw, id)
	}
}

// A transcript replayed as received (ids included) under store:false is refused as a whole;
// its replay form (no ids, reasoning kept with encrypted_content) is accepted.
func TestStoreFalseRefusesItemIDs(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	first := []any{userMsg("hello")}
	settings := map[string]any{"store": false, "include": []any{"reasoning.encrypted_content"}}
	req := func(input []any, extra map[string]any) map[string]any {
		m := map[string]any{"input": input}
		for k, v := range settings {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	r := completed(t, c.create(req(first, nil)))
	var received, replay []any
	for _, raw := range r.Output {
		var item map[string]any
		if err := json.Unmarshal(raw, &item); err != nil {
			t.Fatal(err)
		}
		received = append(received, item)
		clean := map[string]any{}
		for k, v := range item {
			if k != "id" && k != "status" {
				clean[k] = v
			}
		}
		replay = append(replay, clean)
	}
	reasoningID := received[0].(map[string]any)["id"].(string)

	srv.InjectFault(Fault{Kind: FaultServerError}) // a refused request consumes no fault
	full := append(append(append([]any{}, first...), received...), userMsg("next"))
	wantNotPersisted(t, c.create(req(full, nil))[0], reasoningID)
	// On a lane the error names the lane; the connection stays open.
	e := c.create(req(full, map[string]any{"stream_id": "l1"}))[0]
	wantNotPersisted(t, e, reasoningID)
	if e.lane() != "l1" {
		t.Fatalf("lane error without stream_id: %s", e.raw)
	}
	if srv.PendingFaults() != 1 {
		t.Fatal("a refused request consumed the fault")
	}
	srv.ClearFaults()

	// Any item with an id in the server's format counts, not only output items, and ids
	// the real API issued are as unknown here as this server's own.
	const realID = "msg_0c4cb61177bb385c01698aec78d4148191aab448c3e5d42356"
	msg := userMsg("x")
	msg["id"] = realID
	wantNotPersisted(t, c.create(req([]any{msg}, nil))[0], realID)
	// An id the client made itself is no lookup: Codex sends msg_<uuid> ids under store:false.
	msg["id"] = "msg_7abd8142-c22c-51fd-b018-e4d726fc8418"
	completed(t, c.create(req([]any{msg}, nil)))

	// The replay form passes, and so do ids when store is true or absent.
	replayed := append(append(append([]any{}, first...), replay...), userMsg("next"))
	if got := textOf(c.create(req(replayed, nil))); got != "You said: next" {
		t.Fatalf("replay form: %q", got)
	}
	completed(t, c.create(map[string]any{"input": full}))
	completed(t, c.create(map[string]any{"store": true, "input": full}))

	// Chaining under store:false is fine: the cached parent's items carry ids, the new input none.
	r = completed(t, c.create(req(first, nil)))
	completed(t, c.create(req([]any{userMsg("more")}, map[string]any{"previous_response_id": r.ID})))

	recs := waitRecs(t, srv, 10)
	if recs[1].Outcome != OutcomeItemNotFound || recs[1].Store == nil || *recs[1].Store {
		t.Fatalf("record %+v", recs[1])
	}
}

func TestStoreFalseRefusesItemIDsOverHTTP(t *testing.T) {
	_, base := newSim(t, Options{})
	item := map[string]any{"type": "function_call", "id": "fc_68a1f0c2b3d4e5f60718293a", "call_id": "call_1", "name": "list_dir", "arguments": "{}"}
	out := map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}
	resp := postResponses(t, base, map[string]any{"stream": true, "store": false, "input": []any{userMsg("list"), item, out}}, nil)
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	code, hasCode := body.Error["code"]
	if resp.StatusCode != http.StatusNotFound || !hasCode || code != nil || body.Error["param"] != "input" ||
		body.Error["type"] != "invalid_request_error" || body.Error["message"] != strings.Replace(notPersisted, "%s", "fc_68a1f0c2b3d4e5f60718293a", 1) {
		t.Fatalf("HTTP %d %v", resp.StatusCode, body.Error)
	}
	delete(item, "id")
	if resp := postResponses(t, base, map[string]any{"stream": true, "store": false, "input": []any{userMsg("list"), item, out}}, nil); resp.StatusCode != 200 {
		t.Fatalf("without the id: HTTP %d", resp.StatusCode)
	}
}

func TestReceivedRecordsSettings(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"input": "x", "store": false, "include": []any{"reasoning.encrypted_content"},
		"reasoning": map[string]any{"effort": "high"}, "prompt_cache_key": "conv-1"}))
	completed(t, c.create(map[string]any{"input": "x"}))
	recs := waitRecs(t, srv, 2)
	r := recs[0]
	if r.Store == nil || *r.Store || len(r.Include) != 1 || string(r.Reasoning) != `{"effort":"high"}` || r.PromptCacheKey != "conv-1" {
		t.Fatalf("record %+v", r)
	}
	if r := recs[1]; r.Store != nil || r.Include != nil || r.Reasoning != nil || r.PromptCacheKey != "" {
		t.Fatalf("record without settings %+v", r)
	}
	for _, bad := range []map[string]any{{"store": "no"}, {"include": "reasoning.encrypted_content"}, {"prompt_cache_key": 5}} {
		bad["input"] = "x"
		wantError(t, c.create(bad)[0], 400, "invalid_type")
	}
}

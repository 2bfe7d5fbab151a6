package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// reasoningEvent holds the members of the reasoning events and items these tests read.
type reasoningEvent struct {
	Type         string `json:"type"`
	ItemID       string `json:"item_id"`
	OutputIndex  *int   `json:"output_index"`
	SummaryIndex *int   `json:"summary_index"`
	Delta        string `json:"delta"`
	Text         string `json:"text"`
	Part         *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"part"`
	Item *reasoningItem `json:"item"`
}

type reasoningItem struct {
	Type             string  `json:"type"`
	ID               string  `json:"id"`
	Summary          []part  `json:"summary"`
	EncryptedContent *string `json:"encrypted_content"`
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func decodeReasoning(t *testing.T, raw []byte) reasoningEvent {
	t.Helper()
	var e reasoningEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return e
}

// reasoningUsage reads usage.output_tokens_details.reasoning_tokens from a terminal event.
func reasoningUsage(t *testing.T, e event) (reasoning, output int) {
	t.Helper()
	var v struct {
		Response struct {
			Usage struct {
				OutputTokens        int `json:"output_tokens"`
				OutputTokensDetails struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				} `json:"output_tokens_details"`
			} `json:"usage"`
		} `json:"response"`
	}
	if err := json.Unmarshal(e.raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.Response.Usage.OutputTokensDetails.ReasoningTokens, v.Response.Usage.OutputTokens
}

func TestReasoningItemAndSummary(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	evs := c.create(map[string]any{"model": "gpt-5.3-codex", "stream_id": "r", "input": []any{userMsg("hello simulated world")},
		"reasoning": map[string]any{"effort": "low", "summary": "auto"}, "include": []any{"reasoning.encrypted_content"}})
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
		"response.output_item.done",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"}
	if got := types(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for i, e := range evs {
		if e.Seq == nil || *e.Seq != i || e.lane() != "r" {
			t.Fatalf("event %d: sequence_number %v stream_id %v: %s", i, e.Seq, e.StreamID, e.raw)
		}
	}
	const summary = "Thinking about: hello simulated world"
	added := decodeReasoning(t, evs[2].raw)
	if added.Item == nil || added.Item.Type != "reasoning" || !strings.HasPrefix(added.Item.ID, "rs_") ||
		added.Item.Summary == nil || len(added.Item.Summary) != 0 || *added.OutputIndex != 0 || added.Item.EncryptedContent != nil {
		t.Fatalf("reasoning added: %s", evs[2].raw)
	}
	id := added.Item.ID
	var deltas strings.Builder
	for _, e := range evs[3:11] {
		r := decodeReasoning(t, e.raw)
		if r.ItemID != id || r.OutputIndex == nil || *r.OutputIndex != 0 || r.SummaryIndex == nil || *r.SummaryIndex != 0 {
			t.Fatalf("summary event without item_id/output_index/summary_index: %s", e.raw)
		}
		deltas.WriteString(r.Delta)
	}
	if pa := decodeReasoning(t, evs[3].raw).Part; pa == nil || pa.Type != "summary_text" || pa.Text != "" {
		t.Fatalf("part.added: %s", evs[3].raw)
	}
	if deltas.String() != summary || decodeReasoning(t, evs[9].raw).Text != summary {
		t.Fatalf("summary deltas %q done %s", deltas.String(), evs[9].raw)
	}
	if pd := decodeReasoning(t, evs[10].raw).Part; pd == nil || pd.Type != "summary_text" || pd.Text != summary {
		t.Fatalf("part.done: %s", evs[10].raw)
	}
	done := decodeReasoning(t, evs[11].raw).Item
	if done == nil || done.ID != id || !reflect.DeepEqual(done.Summary, []part{{"summary_text", summary}}) || done.EncryptedContent == nil {
		t.Fatalf("reasoning done: %s", evs[11].raw)
	}
	if sealed, ok := unseal(defaultSecret, *done.EncryptedContent); !ok || sealed.ID != id || sealed.Summary != summary || sealed.Model != "gpt-5.3-codex" {
		t.Fatalf("encrypted_content does not verify: %+v %v", sealed, ok)
	}
	if msg := decodeReasoning(t, evs[12].raw); *msg.OutputIndex != 1 {
		t.Fatalf("message not at output_index 1: %s", evs[12].raw)
	}
	r := completed(t, evs)
	if len(r.Output) != 2 || decodeReasoning(t, []byte(`{"item":`+string(r.Output[0])+`}`)).Item.ID != id {
		t.Fatalf("output %s", r.Output)
	}
	reasoning, output := reasoningUsage(t, last(evs))
	// output_tokens counts the output as it counts when sent back: its items' JSON.
	if want := (itemsBytes(r.Output) + 3) / 4; reasoning != 5+reasoningOverhead || output != want || output < reasoning+5 {
		t.Fatalf("usage: reasoning_tokens %d output_tokens %d; want %d and %d", reasoning, output, 5+reasoningOverhead, want)
	}
	rec := waitRecs(t, srv, 1)[0]
	if string(rec.Reasoning) != `{"effort":"low","summary":"auto"}` || !reflect.DeepEqual(rec.Include, []string{"reasoning.encrypted_content"}) {
		t.Fatalf("record reasoning %s include %v", rec.Reasoning, rec.Include)
	}
}

// Without reasoning.summary and include, the item is still there: empty summary, no content.
func TestReasoningItemWithoutSummary(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	evs := c.create(map[string]any{"tools": []any{fnTool("list_dir")}, "input": "list the files"})
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.output_item.done", "response.completed"}
	if got := types(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v", got)
	}
	item := decodeReasoning(t, evs[3].raw).Item
	if item.Type != "reasoning" || item.Summary == nil || len(item.Summary) != 0 || item.EncryptedContent != nil {
		t.Fatalf("reasoning item %s", evs[3].raw)
	}
	if reasoning, _ := reasoningUsage(t, last(evs)); reasoning == 0 {
		t.Fatal("no reasoning tokens")
	}
	// The summary of a tool call says which tool.
	evs = c.create(map[string]any{"tools": []any{fnTool("list_dir")}, "input": "list the files", "reasoning": map[string]any{"summary": "detailed"}})
	i := indexOf(evs, "", "response.output_item.done")
	if item := decodeReasoning(t, evs[i].raw).Item; item == nil || len(item.Summary) != 1 || item.Summary[0].Text != "Deciding to call list_dir." {
		t.Fatalf("tool-call summary: %s", evs[i].raw)
	}
	// A warm-up generates nothing: no reasoning item.
	if got := types(c.create(map[string]any{"generate": false, "input": "x"})); len(got) != 2 {
		t.Fatalf("warm-up events %v", got)
	}
}

func TestReasoningModels(t *testing.T) {
	cases := []struct {
		mode    ReasoningMode
		model   string
		reasons bool
	}{
		{ReasoningAuto, "", true}, // sim-model
		{ReasoningAuto, "gpt-5.3-codex", true},
		{ReasoningAuto, "interop-sim-model", true},
		{ReasoningAuto, "gpt-4o", false},
		{ReasoningAuto, "gpt-4.1-mini", false},
		{ReasoningAuto, "gpt-3.5-turbo", false},
		{ReasoningAuto, "chatgpt-4o-latest", false},
		{ReasoningAlways, "gpt-4o", true},
		{ReasoningNever, "gpt-5.3-codex", false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.mode, tc.model), func(t *testing.T) {
			_, base := newSim(t, Options{Reasoning: tc.mode})
			c := dial(t, base)
			r := completed(t, c.create(map[string]any{"model": tc.model, "input": "x"}))
			if got := strings.Contains(string(r.Output[0]), `"type":"reasoning"`); got != tc.reasons {
				t.Fatalf("first output item %s, reasoning %v", r.Output[0], tc.reasons)
			}
			// effort none is accepted by every model; another effort only by reasoning models.
			completed(t, c.create(map[string]any{"model": tc.model, "input": "x", "reasoning": map[string]any{"effort": "none"}}))
			evs := c.create(map[string]any{"model": tc.model, "input": "x", "reasoning": map[string]any{"effort": "high"}})
			if tc.reasons {
				completed(t, evs)
				return
			}
			wantError(t, evs[0], 400, "unsupported_parameter")
			if e := evs[0].Error; *e.Param != "reasoning.effort" || e.Message != "Unsupported parameter: 'reasoning.effort' is not supported with this model." {
				t.Fatalf("error %s", evs[0].raw)
			}
		})
	}
}

func TestReasoningParameterValues(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	for _, effort := range reasoningEfforts {
		for _, summary := range append([]string{""}, reasoningSummaries...) {
			r := map[string]any{"effort": effort}
			if summary != "" {
				r["summary"] = summary
			}
			completed(t, c.create(map[string]any{"input": "x", "reasoning": r}))
		}
	}
	cases := []struct {
		reasoning any
		code      string
		param     string
	}{
		{map[string]any{"effort": "max"}, "invalid_value", "reasoning.effort"},
		{map[string]any{"effort": 3}, "invalid_value", "reasoning.effort"},
		{map[string]any{"summary": "verbose"}, "invalid_value", "reasoning.summary"},
		{map[string]any{"effort": "low", "summary": true}, "invalid_value", "reasoning.summary"},
		{"high", "invalid_type", "reasoning"},
	}
	for _, tc := range cases {
		e := c.create(map[string]any{"input": "x", "reasoning": tc.reasoning})[0]
		wantError(t, e, 400, tc.code)
		if *e.Error.Param != tc.param {
			t.Fatalf("%v: %s", tc.reasoning, e.raw)
		}
	}
}

// text.verbosity takes what the API takes and nothing else.
func TestTextVerbosityValues(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	for _, v := range textVerbosities {
		completed(t, c.create(map[string]any{"input": "x", "text": map[string]any{"verbosity": v}}))
	}
	completed(t, c.create(map[string]any{"input": "x", "text": map[string]any{}}))
	for _, tc := range []struct {
		text        any
		code, param string
	}{
		{map[string]any{"verbosity": "minimal"}, "invalid_value", "text.verbosity"},
		{map[string]any{"verbosity": 1}, "invalid_value", "text.verbosity"},
		{"low", "invalid_type", "text"},
	} {
		e := c.create(map[string]any{"input": "x", "text": tc.text})[0]
		wantError(t, e, 400, tc.code)
		if *e.Error.Param != tc.param {
			t.Fatalf("%v: %s", tc.text, e.raw)
		}
	}
}

func TestReasoningOverSSE(t *testing.T) {
	_, base := newSim(t, Options{})
	sse, err := readSSE(postResponses(t, base, map[string]any{"stream": true, "input": "hi",
		"reasoning": map[string]any{"summary": "concise"}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var summary strings.Builder
	for i, s := range sse {
		e := decode(t, s.data)
		if e.Type != s.name || e.Seq == nil || *e.Seq != i {
			t.Fatalf("SSE event %d %s", i, s.data)
		}
		if e.Type == "response.reasoning_summary_text.delta" {
			summary.WriteString(e.Delta)
		}
	}
	if summary.String() != "Thinking about: hi" {
		t.Fatalf("summary %q", summary.String())
	}
}

// encryptedFrom runs one reasoning turn on base and returns its reasoning item.
func encryptedFrom(t *testing.T, base string) map[string]any {
	t.Helper()
	r := completed(t, dial(t, base).create(map[string]any{"store": false, "input": "think",
		"include": []any{"reasoning.encrypted_content"}, "reasoning": map[string]any{"summary": "auto"}}))
	var item map[string]any
	if err := json.Unmarshal(r.Output[0], &item); err != nil || item["encrypted_content"] == nil {
		t.Fatalf("reasoning item %s", r.Output[0])
	}
	return item
}

func TestEncryptedContentIsVerified(t *testing.T) {
	_, base1 := newSim(t, Options{})
	item := encryptedFrom(t, base1)
	replay := map[string]any{"type": "reasoning", "summary": item["summary"], "encrypted_content": item["encrypted_content"]}

	// Another simulator with the default secret (a daemon restarted against a new one) accepts it.
	srv2, base2 := newSim(t, Options{})
	c := dial(t, base2)
	completed(t, c.create(map[string]any{"store": false, "input": []any{userMsg("think"), replay, userMsg("again")}}))
	// An item carrying nothing (no id, no content) is accepted too.
	completed(t, c.create(map[string]any{"store": false, "input": []any{map[string]any{"type": "reasoning", "summary": []any{}}, userMsg("x")}}))

	// Content the server did not seal is refused, naming the item by id, else by index.
	tampered := item["encrypted_content"].(string)
	tampered = tampered[:len(tampered)-2] + "AA"
	cases := []struct {
		item map[string]any
		name string
	}{
		{map[string]any{"type": "reasoning", "summary": []any{}, "encrypted_content": tampered}, "input[1]"},
		{map[string]any{"type": "reasoning", "id": "rs_forged", "summary": []any{}, "encrypted_content": "not-sealed"}, "rs_forged"},
		{map[string]any{"type": "reasoning", "summary": []any{}, "encrypted_content": 42}, "input[1]"},
	}
	for _, tc := range cases {
		e := c.create(map[string]any{"input": []any{userMsg("x"), tc.item}})[0] // store absent: ids allowed
		wantError(t, e, 400, "invalid_encrypted_content")
		if e.Error.Type != "invalid_request_error" || !strings.HasPrefix(e.Error.Message, "The encrypted content for item "+tc.name+" could not be verified.") {
			t.Fatalf("error %s", e.raw)
		}
	}
	if recs := waitRecs(t, srv2, 5); recs[2].Outcome != "invalid_encrypted_content" {
		t.Fatalf("outcome %q", recs[2].Outcome)
	}

	// A server with another secret refuses it, on HTTP too.
	_, base3 := newSim(t, Options{Secret: []byte("another secret")})
	wantError(t, dial(t, base3).create(map[string]any{"store": false, "input": []any{replay}})[0], 400, "invalid_encrypted_content")
	decodeHTTPError(t, postResponses(t, base3, map[string]any{"store": false, "input": []any{replay}}, nil),
		http.StatusBadRequest, "invalid_encrypted_content")
	if resp := postResponses(t, base2, map[string]any{"store": false, "input": []any{replay}}, nil); resp.StatusCode != 200 {
		t.Fatalf("HTTP with a valid replay: %d", resp.StatusCode)
	}
}

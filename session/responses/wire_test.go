package responses

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func items(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// The spliced frame is byte for byte the encoding/json encoding of the same
// event, whether it encodes the settings or splices their encoding, and an
// empty item is refused rather than sent as a broken frame.
func TestMarshalFrameSplicesItems(t *testing.T) {
	no := false
	sets := []Settings{
		{Model: "m", Tools: json.RawMessage(`[{"type":"function"}]`)},
		{Model: "m<x>", Instructions: "be <brief> & \"exact\"\n", Tools: json.RawMessage(`[{"type":"function","name":"a"}]`), ToolChoice: "auto",
			ParallelToolCalls: true, Reasoning: &Reasoning{Effort: "low", Summary: "auto"}, Include: []string{"reasoning.encrypted_content"}, PromptCacheKey: "s1"},
	}
	for _, set := range sets {
		// Items are spliced as they are (encoding/json would escape <, > and &
		// in them): these need no escaping, so the bytes must match.
		for _, in := range [][]json.RawMessage{nil, items(`{"a":1}`), items(`{"type":"message","content":"é"}`, `[1,2]`, `"s"`)} {
			for _, ev := range []Create{
				{Type: "response.create", Settings: set, StreamID: "l", Input: in},
				{Type: "response.create", Settings: set, Generate: &no, PreviousResponseID: "resp_1", Input: in, Encoded: set.Key()},
			} {
				got, err := ev.Frame()
				if err != nil {
					t.Fatal(err)
				}
				if ev.Input == nil {
					ev.Input = []json.RawMessage{}
				}
				want, _ := json.Marshal(ev)
				if !bytes.Equal(got, want) {
					t.Fatalf("Frame:\n got %s\nwant %s", got, want)
				}
			}
		}
	}
	// An item with characters encoding/json escapes is the same JSON value.
	ev := Create{Type: "response.create", Settings: sets[0], Input: items(`{"type":"message","content":"<b> & é"}`)}
	got, _ := ev.Frame()
	want, _ := json.Marshal(ev)
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
		t.Fatalf("Frame:\n got %s\nwant %s", got, want)
	}
	if _, err := (Create{Input: []json.RawMessage{nil}}).Frame(); err == nil {
		t.Fatal("an empty item was encoded")
	}
}

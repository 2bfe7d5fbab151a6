package sim

import (
	"strings"
	"testing"
)

// The error faults answer a request instead of its response, in each transport's shape.
func TestFaultErrorsInsteadOfResponse(t *testing.T) {
	cases := []struct {
		kind   FaultKind
		status int
		typ    string
		code   string
		msg    string
	}{
		{FaultInsufficientQuota, 429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."},
		{FaultContextLength, 400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model."},
		{FaultServerError, 500, "server_error", "server_error", ""},
		{FaultInvalidAPIKey, 401, "invalid_request_error", "invalid_api_key", ""},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			srv, base := newSim(t, Options{})
			srv.InjectFault(Fault{Kind: tc.kind, Count: 3})
			c := dial(t, base)
			for _, lane := range []string{"", "l"} {
				req := map[string]any{"input": "x"}
				if lane != "" {
					req["stream_id"] = lane
				}
				evs := c.create(req)
				if len(evs) != 1 {
					t.Fatalf("events %v, want only the error", types(evs))
				}
				wantError(t, evs[0], tc.status, tc.code)
				if evs[0].lane() != lane || evs[0].Error.Type != tc.typ || !strings.HasPrefix(evs[0].Error.Message, tc.msg) {
					t.Fatalf("error %s", evs[0].raw)
				}
			}
			e := decodeHTTPError(t, postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil), tc.status, tc.code)
			if e.Type != tc.typ {
				t.Fatalf("HTTP error %+v", e)
			}
			completed(t, c.create(map[string]any{"input": "x"})) // used up; the connection is still open
			if recs := waitRecs(t, srv, 4); recs[0].Fault != tc.kind || recs[0].Outcome != tc.code || recs[3].Fault != FaultNone {
				t.Fatalf("records %+v", recs)
			}
		})
	}
}

// The context window counts the effective input: cached parent items, new input,
// instructions and tools.
func TestContextWindow(t *testing.T) {
	_, base := newSim(t, Options{ContextWindow: 200})
	c := dial(t, base)
	r := completed(t, c.create(map[string]any{"generate": false, "input": strings.Repeat("a", 400)}))
	completed(t, c.create(map[string]any{"generate": false, "input": strings.Repeat("b", 400)}))
	e := c.create(map[string]any{"input": strings.Repeat("c", 900)})[0]
	wantError(t, e, 400, "context_length_exceeded")
	if *e.Error.Param != "input" || e.Error.Message != "Your input exceeds the context window of this model. Please adjust your input and try again." {
		t.Fatalf("error %s", e.raw)
	}
	r = completed(t, c.create(map[string]any{"generate": false, "input": strings.Repeat("d", 500)}))
	wantError(t, c.create(map[string]any{"previous_response_id": r.ID, "input": strings.Repeat("e", 400)})[0], 400, "context_length_exceeded")
	wantError(t, c.create(map[string]any{"instructions": strings.Repeat("i", 800), "input": "x"})[0], 400, "context_length_exceeded")
	decodeHTTPError(t, postResponses(t, base, map[string]any{"input": strings.Repeat("c", 900)}, nil), 400, "context_length_exceeded")
}

func TestModelsList(t *testing.T) {
	_, base := newSim(t, Options{Models: []string{"gpt-5.3-codex"}})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"model": "gpt-5.3-codex", "input": "x"}))
	for _, model := range []string{"gpt-nope", ""} { // no model: the default, sim-model, is not listed
		e := c.create(map[string]any{"model": model, "input": "x"})[0]
		wantError(t, e, 404, "model_not_found")
		want := modelOr(model, "sim-model")
		if e.Error.Type != "invalid_request_error" || e.Error.Message != "The model '"+want+"' does not exist or you do not have access to it." {
			t.Fatalf("error %s", e.raw)
		}
	}
	decodeHTTPError(t, postResponses(t, base, map[string]any{"model": "gpt-nope", "stream": true, "input": "x"}, nil), 404, "model_not_found")
}

// Faults apply to requests carrying stream:true (Codex sends it on every frame).
func TestFaultsApplyToStreamTrue(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultServerError})
	wantError(t, dial(t, base).create(map[string]any{"stream": true, "input": "x"})[0], 500, "server_error")
}

// Options.Windows gives a model a window of its own; the others keep
// ContextWindow (here none). Each request's record holds the tokens the
// window counted, and a response's input plus output tokens are what a
// request chained on it holds before its new items.
func TestContextWindowPerModel(t *testing.T) {
	srv, base := newSim(t, Options{Windows: map[string]int{"small": 100}})
	c := dial(t, base)
	wantError(t, c.create(map[string]any{"model": "small", "input": strings.Repeat("a", 600)})[0], 400, "context_length_exceeded")
	r := completed(t, c.create(map[string]any{"model": "big", "input": strings.Repeat("a", 600) + " sim:tokens=40"}))
	next := completed(t, c.create(map[string]any{"model": "big", "previous_response_id": r.ID, "input": []any{}}))
	recs := waitRecs(t, srv, 3)
	if recs[0].Outcome != "context_length_exceeded" || recs[0].InputTokens <= 100 {
		t.Fatalf("the refused request's record: outcome %s, %d tokens", recs[0].Outcome, recs[0].InputTokens)
	}
	if recs[1].InputTokens != r.Usage.InputTokens || recs[2].InputTokens != next.Usage.InputTokens {
		t.Fatalf("records count %d and %d tokens, usage %d and %d", recs[1].InputTokens, recs[2].InputTokens, r.Usage.InputTokens, next.Usage.InputTokens)
	}
	if sum := r.Usage.InputTokens + r.Usage.OutputTokens; next.Usage.InputTokens > sum || next.Usage.InputTokens < sum-1 {
		t.Fatalf("input %d + output %d tokens, but the chained request holds %d", r.Usage.InputTokens, r.Usage.OutputTokens, next.Usage.InputTokens)
	}
	decodeHTTPError(t, postResponses(t, base, map[string]any{"model": "small", "input": strings.Repeat("c", 900)}, nil), 400, "context_length_exceeded")
}

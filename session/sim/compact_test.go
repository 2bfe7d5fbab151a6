package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func postCompact(t *testing.T, base string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr, Timeout: ioTimeout}).Post(base+"/responses/compact", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST compact: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// POST /responses/compact answers one JSON object whose output keeps the
// user's messages and ends with a sealed compaction item; carried forward
// as input (without its id, under store:false) the item is accepted and
// counts for its bytes, a forged one is refused; the endpoint needs a model
// and has the model's window.
func TestCompactEndpoint(t *testing.T) {
	srv, base := newSim(t, Options{Windows: map[string]int{"small": 50}})
	input := []any{userMsg("first question"), map[string]any{"type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": strings.Repeat("a long answer ", 200)}}},
		map[string]any{"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"},
		map[string]any{"type": "function_call_output", "call_id": "c1", "output": strings.Repeat("file text ", 200)},
		userMsg("second question")}
	resp := postCompact(t, base, map[string]any{"model": "gpt-5.3-codex", "instructions": "be brief", "input": input})
	var got struct {
		ID     string            `json:"id"`
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
		Usage  usageObj          `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP %d: %v", resp.StatusCode, err)
	}
	if got.Object != "response.compaction" || !strings.HasPrefix(got.ID, "resp_") || len(got.Output) != 3 ||
		!strings.Contains(string(got.Output[0]), "first question") || !strings.Contains(string(got.Output[1]), "second question") {
		t.Fatalf("compaction %+v", got)
	}
	var item struct {
		Type, ID         string
		EncryptedContent string `json:"encrypted_content"`
	}
	if json.Unmarshal(got.Output[2], &item) != nil || item.Type != "compaction" || !strings.HasPrefix(item.ID, "cmp_") || item.EncryptedContent == "" {
		t.Fatalf("compaction item %s", got.Output[2])
	}
	if got.Usage.InputTokens < 700 || got.Usage.OutputTokens != (len(got.Output[2])+3)/4 {
		t.Fatalf("usage %+v", got.Usage)
	}

	c := dial(t, base)
	carried := map[string]any{"type": "compaction", "encrypted_content": item.EncryptedContent}
	r := completed(t, c.create(map[string]any{"store": false, "input": []any{userMsg("first question"), carried, userMsg("third")}}))
	if r.Usage.InputTokens > got.Usage.InputTokens/2 {
		t.Fatalf("the compacted input counts %d tokens, the whole %d", r.Usage.InputTokens, got.Usage.InputTokens)
	}
	forged := map[string]any{"type": "compaction", "encrypted_content": item.EncryptedContent[:len(item.EncryptedContent)-4] + "AAAA"}
	wantError(t, c.create(map[string]any{"store": false, "input": []any{forged, userMsg("x")}})[0], 400, "invalid_encrypted_content")

	decodeHTTPError(t, postCompact(t, base, map[string]any{"input": input}), 400, "missing_required_parameter")
	decodeHTTPError(t, postCompact(t, base, map[string]any{"model": "small", "input": input}), 400, "context_length_exceeded")
	recs := waitRecs(t, srv, 5)
	if recs[0].Endpoint != EndpointCompact || recs[0].Outcome != got.ID || recs[0].InputTokens != got.Usage.InputTokens || recs[1].Endpoint != "" {
		t.Fatalf("records %+v", recs[:2])
	}
}

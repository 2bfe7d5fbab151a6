package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The API's own compaction, POST {base}/responses/compact. From OpenAI's API reference (the
// CompactResource and CompactionSummaryItemParam schemas): the body is a create's model, input
// (or previous_response_id), instructions, tools, parallel_tool_calls, reasoning and
// prompt_cache_key; model is required; the answer is one JSON object {id, object:
// "response.compaction", created_at, output, usage}, whose output replaces the input; a
// compaction item is {type: "compaction", id, encrypted_content}, opaque, and goes back as
// input ({type, encrypted_content}, id optional). Assumed, as no document says more: the output
// keeps the input's user messages verbatim, in order, and ends with one compaction item
// standing for everything else (assistant messages, reasoning, calls and their outputs,
// developer and system messages); the endpoint has the model's window, like a create; there is
// no WebSocket event for it. The simulated compaction item seals (as reasoning's
// encrypted_content is sealed) a digest of what it replaced, so a later request carrying one
// this server did not issue is refused with invalid_encrypted_content; it counts for its bytes
// like any item. Its cost: Cost.ProcessDelay of the input, then FirstToken, then the item's
// tokens at TokensPerSecond.

// serveCompact answers POST …/responses/compact.
func (s *Server) serveCompact(w http.ResponseWriter, r *http.Request) {
	x, ok := s.readHTTPRequest(w, r, EndpointCompact)
	if !ok {
		return
	}
	req := x.req
	if req.model == "" && req.invalid == nil {
		req.fail(invalidRequest("missing_required_parameter", "model", "Missing required parameter: 'model'."))
	}
	if s.opts.validate(req); req.invalid != nil {
		x.fail(*req.invalid)
		return
	}
	parent, ok := x.parent()
	if !ok {
		return
	}
	in := continuing(parent, req)
	fault := s.faults.takeFor(s.records, x.i)
	if e, ok := fault.instead(req.model); ok {
		x.fail(e)
		return
	}
	if !x.fitsWindow(in.bytes) {
		return
	}
	output := compacted(s.opts.secret(), req.model, in.items)
	outTokens := (itemsBytes(output[len(output)-1:]) + 3) / 4
	ctx, stop := s.requestContext(r)
	defer stop()
	cost := s.opts.Cost
	x.process(ctx, cost.FirstToken+time.Duration(outTokens)*cost.tokenGap())
	id := newID("resp")
	n := inputTokens(req, in.bytes)
	b, err := marshal(map[string]any{"id": id, "object": "response.compaction", "created_at": time.Now().Unix(),
		"output": output, "usage": map[string]any{"input_tokens": n, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": outTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": n + outTokens}})
	if err != nil {
		x.fail(serverError())
		return
	}
	s.records.finish(x.i, id, id)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// EndpointCompact is Received.Endpoint for POST …/responses/compact.
const EndpointCompact = "responses/compact"

// compacted is the compaction of items: the user's messages as they were, then one compaction
// item, sealed with secret, for the rest.
func compacted(secret []byte, model string, items []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	replaced, last := 0, ""
	for _, it := range items {
		var v inputItem
		if json.Unmarshal(it, &v) == nil && v.Role == "user" && (v.Type == "" || v.Type == "message") {
			out = append(out, it)
			last = partsText(v.Content)
			continue
		}
		replaced++
	}
	if len(last) > 60 {
		last = last[:60]
	}
	id := newID("cmp")
	digest := "compacted " + strconv.Itoa(replaced) + " items; the last request: " + strings.ToValidUTF8(last, "")
	item, _ := json.Marshal(map[string]any{"type": "compaction", "id": id,
		"encrypted_content": seal(secret, sealedReasoning{ID: id, Summary: digest, Model: model})})
	return append(out, item)
}

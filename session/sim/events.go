package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// eventWriter is a transport's side of one response stream.
type eventWriter interface {
	event(typ string, ev map[string]any) error              // one server event
	errorEvent(e apiError, seq *int, streamID string) error // an in-stream error, in the transport's shape
	junk(binary bool) error                                 // a frame the client cannot parse
	abort(code int)                                         // drop the connection mid-response
}

var (
	errFaultClosed = errors.New("sim: connection closed by an injected fault")
	errStreamError = errors.New("sim: response ended by an injected error event")
)

// reply streams one response — response.created, the output items, one terminal event —
// through an eventWriter, firing the request's fault and pacing deltas by the cost model.
// Created per response by the transport handler, used once.
type reply struct {
	id           string
	model        string
	prevID       string
	streamID     string // carried on every event when set
	instructions json.RawMessage
	tools        json.RawMessage
	parallel     bool // parallel_tool_calls (absent = true, as the API defaults it)
	generate     bool
	store        bool // the request's store (absent = true), echoed in the response object
	reasons      bool // a reasoning model: the output opens with a reasoning item
	effort       string
	summary      string            // reasoning.summary requested ("" = none streamed)
	encrypted    bool              // include has reasoning.encrypted_content
	sources      bool              // include has web_search_call.action.sources
	secret       []byte            // seals encrypted_content
	effective    []json.RawMessage // cached items + new input
	effBytes     int               // itemsBytes(effective)
	pace         *pacer            // the schedule, begun when processing began
	cachedBytes  int
	cost         Cost
	fault        *Fault
	hint         string                                               // Options.Hint
	conn         int                                                  // Received.Conn
	onDelta      func(conn int, streamID, delta string, at time.Time) // Options.OnDelta
	w            eventWriter
	createdAt    int64

	onSteerAccepted func(steerID string) // Options.OnSteerAccepted
	// persist, when set, keeps a completed or incomplete response (store:true over HTTP; the
	// lane's latest on WebSocket) before its terminal event goes out, so a client never
	// continues from it too early.
	persist func(id string, effective []json.RawMessage, effBytes int, output []json.RawMessage)

	outputDelay time.Duration // the pacing waited so far: FirstToken plus the token gaps

	// board, on WebSocket, is the connection's steering state: the reply acknowledges what is
	// queued for it and stops its text at a safe boundary once something is. records
	// completes the steer frames' records.
	board   *steerBoard
	records *recorder
	steered bool // the text stopped for queued steering input: incomplete, reason steered

	seq             int  // next sequence_number
	fired           bool // the fault has acted
	outTokens       int  // text and argument deltas
	reasoningTokens int  // set by streamReasoning
}

// replyResult is how a reply ended: status is completed, incomplete or failed.
type replyResult struct {
	status      string
	output      []json.RawMessage
	outputDelay time.Duration // the cost model's pacing of the output (Received.OutputDelay)
	answeredAt  time.Time     // when the terminal event had been written (Received.AnsweredAt)
	// next is the steering input an automatic successor continues with (none: no successor).
	next []steerSub
}

func newReply(req *request, streamID string, effective []json.RawMessage, effBytes, cachedBytes int, pace *pacer, fault *Fault, w eventWriter, opts Options) *reply {
	model := modelOr(req.model, opts.model())
	return &reply{
		id: newID("resp"), model: model, prevID: req.prevID, streamID: streamID,
		instructions: req.fields["instructions"], tools: req.tools, parallel: string(req.fields["parallel_tool_calls"]) != "false",
		generate: req.generates(),
		store:    !req.storeOff(), reasons: opts.reasons(model), effort: req.reasoning.effort,
		summary: req.reasoning.summary, encrypted: req.includes("reasoning.encrypted_content"),
		sources: req.includes("web_search_call.action.sources"),
		secret:  opts.secret(), effective: effective, effBytes: effBytes, pace: pace, cachedBytes: cachedBytes, cost: opts.Cost,
		fault: fault, hint: opts.Hint, onDelta: opts.OnDelta, onSteerAccepted: opts.OnSteerAccepted, w: w, createdAt: time.Now().Unix(),
	}
}

// run streams the whole response. It returns errFaultClosed or errStreamError when a fault
// ended it, or the context's/writer's error when the connection went away.
func (r *reply) run(ctx context.Context) (replyResult, error) {
	if err := r.emit(ctx, "response.created", map[string]any{"response": r.object("in_progress", nil)}, false); err != nil {
		return replyResult{}, err
	}
	if r.fault.is(FaultResponseFailed) {
		if r.generate {
			if err := r.emit(ctx, "response.in_progress", map[string]any{"response": r.object("in_progress", nil)}, false); err != nil {
				return replyResult{}, err
			}
		}
		return r.terminal(ctx, "failed", nil)
	}
	if !r.generate { // warm-up: no output, no in_progress
		if r.fault.is(FaultResponseIncomplete) {
			return r.terminal(ctx, "incomplete", nil)
		}
		return r.terminal(ctx, "completed", nil)
	}
	if err := r.emit(ctx, "response.in_progress", map[string]any{"response": r.object("in_progress", nil)}, false); err != nil {
		return replyResult{}, err
	}
	if err := r.pause(ctx, r.cost.FirstToken); err != nil {
		return replyResult{}, err
	}
	p := planTurn(r.effective, r.tools, r.parallel)
	if p.echoed && r.hint != "" {
		p.text += "\n\n" + r.hint
	}
	var output []json.RawMessage
	if r.reasons {
		item, err := r.streamReasoning(ctx, 0, reasoningSummary(p, readTurn(r.effective).text))
		if err != nil {
			return replyResult{}, err
		}
		output = append(output, item)
	}
	if p.search != "" {
		item, err := r.streamSearch(ctx, len(output), p.search, r.sources)
		if err != nil {
			return replyResult{}, err
		}
		output = append(output, item)
	}
	incomplete := r.fault.is(FaultResponseIncomplete)
	var item json.RawMessage
	var err error
	if p.callName != "" {
		stream := r.streamCall
		if p.custom {
			stream = r.streamCustom
		}
		for range p.calls - 1 {
			if item, err = stream(ctx, len(output), p.callName, p.callArgs); err != nil {
				return replyResult{}, err
			}
			output = append(output, item)
		}
		item, err = stream(ctx, len(output), p.callName, p.callArgs)
	} else {
		item, err = r.streamText(ctx, len(output), p.text, p.gap, p.chunk, incomplete)
	}
	if err != nil {
		return replyResult{}, err
	}
	status := "completed"
	if incomplete || r.steered {
		status = "incomplete"
	}
	return r.terminal(ctx, status, append(output, item))
}

// streamText streams a message item, chunk words a delta; gap, when
// longer than the cost model's, spaces its deltas (the slow word).
func (r *reply) streamText(ctx context.Context, index int, text string, gap time.Duration, chunk int, incomplete bool) (json.RawMessage, error) {
	id := newID("msg")
	deltas := joinChunks(splitWords(text), chunk)
	status := "completed"
	if incomplete {
		deltas = deltas[:(len(deltas)+1)/2]
		text, status = strings.Join(deltas, ""), "incomplete"
	}
	part := func(t string) map[string]any {
		return map[string]any{"type": "output_text", "text": t, "annotations": []any{}}
	}
	at := func(ev map[string]any) map[string]any {
		ev["item_id"], ev["output_index"], ev["content_index"] = id, index, 0
		return ev
	}
	added := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}
	if err := r.emit(ctx, "response.output_item.added", map[string]any{"output_index": index, "item": added}, false); err != nil {
		return nil, err
	}
	if err := r.emit(ctx, "response.content_part.added", at(map[string]any{"part": part("")}), false); err != nil {
		return nil, err
	}
	for k, d := range deltas {
		if k > 0 && r.board != nil && r.board.queued(r.id) {
			// A safe output boundary: the answer so far is kept, the rest is the successor's.
			r.steered = true
			text, status = strings.Join(deltas[:k], ""), "incomplete"
			break
		}
		if k > 0 {
			if err := r.pause(ctx, max(gap, r.cost.tokenGap())); err != nil {
				return nil, err
			}
		}
		if err := r.emit(ctx, "response.output_text.delta", at(map[string]any{"delta": d, "logprobs": []any{}}), false); err != nil {
			return nil, err
		}
		if r.onDelta != nil {
			r.onDelta(r.conn, r.streamID, d, time.Now())
		}
		r.outTokens++
	}
	if err := r.emit(ctx, "response.output_text.done", at(map[string]any{"text": text, "logprobs": []any{}}), false); err != nil {
		return nil, err
	}
	if err := r.emit(ctx, "response.content_part.done", at(map[string]any{"part": part(text)}), false); err != nil {
		return nil, err
	}
	item := map[string]any{"type": "message", "id": id, "role": "assistant", "status": status,
		"content": []any{part(text)}}
	if err := r.emit(ctx, "response.output_item.done", map[string]any{"output_index": index, "item": item}, false); err != nil {
		return nil, err
	}
	return json.Marshal(item)
}

func (r *reply) streamCall(ctx context.Context, index int, name, args string) (json.RawMessage, error) {
	id, callID := newID("fc"), newID("call")
	item := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name,
		"arguments": "", "status": "in_progress"}
	if err := r.emit(ctx, "response.output_item.added", map[string]any{"output_index": index, "item": item}, false); err != nil {
		return nil, err
	}
	for k, d := range splitRunes(args, 12) {
		if k > 0 {
			if err := r.pause(ctx, r.cost.tokenGap()); err != nil {
				return nil, err
			}
		}
		ev := map[string]any{"item_id": id, "output_index": index, "delta": d}
		if err := r.emit(ctx, "response.function_call_arguments.delta", ev, false); err != nil {
			return nil, err
		}
		r.outTokens++
	}
	ev := map[string]any{"item_id": id, "output_index": index, "name": name, "arguments": args}
	if err := r.emit(ctx, "response.function_call_arguments.done", ev, false); err != nil {
		return nil, err
	}
	done := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name,
		"arguments": args, "status": "completed"}
	if err := r.emit(ctx, "response.output_item.done", map[string]any{"output_index": index, "item": done}, false); err != nil {
		return nil, err
	}
	return json.Marshal(done)
}

// terminal writes response.completed, response.incomplete or response.failed. On WebSocket
// the response stops accepting steering first; what it holds is acknowledged before the
// terminal event and then goes to an automatic successor (replyResult.next), waits for the
// client's tool outputs (response.steer.pending after response.completed), or is returned
// (response.steer.failed after response.failed).
func (r *reply) terminal(ctx context.Context, status string, output []json.RawMessage) (replyResult, error) {
	obj := r.object(status, output)
	switch status {
	case "incomplete":
		reason := "max_output_tokens"
		if r.steered {
			reason = "steered"
		}
		obj["incomplete_details"] = map[string]any{"reason": reason}
	case "failed":
		obj["error"] = map[string]any{"code": "server_error", "message": "The model failed to generate a response (simulated)."}
	}
	obj["usage"] = r.usage(output)
	if r.persist != nil && status != "failed" {
		r.persist(r.id, r.effective, r.effBytes, output)
	}
	calls := requiredInput(output)
	waits := r.board != nil && status == "completed" && len(calls) > 0
	var subs []steerSub
	if r.board != nil && !waits {
		subs = r.board.end(r.id)
		if err := r.ack(subs); err != nil {
			return replyResult{}, err
		}
	}
	if err := r.emit(ctx, "response."+status, map[string]any{"response": obj}, true); err != nil {
		return replyResult{}, err
	}
	res := replyResult{status: status, output: output, outputDelay: r.outputDelay, answeredAt: time.Now()}
	if waits { // steering may come while its tools run: held for the continuation
		write := func(ev map[string]any) error { return r.w.event(ev["type"].(string), ev) }
		finish := func(rec int) { r.records.finish(rec, OutcomeSteerAccepted, "") }
		var err error
		r.seq, err = r.board.settle(r.id, r.streamID, calls, r.seq, write, finish)
		return res, err
	}
	if len(subs) > 0 && status == "failed" {
		return res, r.steerFailed(subs, &steerError{"response_not_active", "The response failed before the steering input could be applied."})
	}
	res.next = subs
	return res, nil
}

// ack writes response.steer.accepted for each submission of subs not yet acknowledged.
func (r *reply) ack(subs []steerSub) error {
	for _, sub := range subs {
		if sub.acked {
			continue
		}
		ev := map[string]any{"type": "response.steer.accepted", "sequence_number": r.seq,
			"steer": map[string]any{"id": sub.id, "previous_response_id": r.id}}
		if err := r.steerEvent(ev); err != nil {
			return err
		}
		r.records.finish(sub.rec, OutcomeSteerAccepted, "")
		if r.onSteerAccepted != nil {
			r.onSteerAccepted(sub.id)
		}
	}
	return nil
}

// steerFailed returns subs' input uncommitted.
func (r *reply) steerFailed(subs []steerSub, e *steerError) error {
	for _, sub := range subs {
		raw, _ := json.Marshal(sub.input)
		if err := r.steerEvent(steerFailed(steerRequest{prevID: r.id, rawInput: raw}, sub.id, e, r.seq, r.streamID)); err != nil {
			return err
		}
	}
	return nil
}

// steerEvent writes one steering event of this response's stream, in its sequence.
func (r *reply) steerEvent(ev map[string]any) error {
	if r.streamID != "" {
		ev["stream_id"] = r.streamID
	}
	r.seq++
	return r.w.event(ev["type"].(string), ev)
}

// requiredInput is the stubs of the client-owned tool outputs output waits for.
func requiredInput(output []json.RawMessage) []map[string]any {
	var stubs []map[string]any
	for _, raw := range output {
		var it struct{ Type, CallID, Name string }
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		_ = json.Unmarshal(fields["type"], &it.Type)
		_ = json.Unmarshal(fields["call_id"], &it.CallID)
		_ = json.Unmarshal(fields["name"], &it.Name)
		switch it.Type {
		case "function_call":
			stubs = append(stubs, map[string]any{"type": "function_call_output", "call_id": it.CallID, "name": it.Name})
		case "custom_tool_call":
			stubs = append(stubs, map[string]any{"type": "custom_tool_call_output", "call_id": it.CallID})
		}
	}
	return stubs
}

// successor is the automatic response that continues r with the steering input of subs,
// inheriting r's settings; its response.created commits that input.
func (r *reply) successor(subs []steerSub, output []json.RawMessage) *reply {
	in := steerInputs(subs)
	s := *r
	s.id, s.prevID, s.createdAt = newID("resp"), r.id, time.Now().Unix()
	s.effective = append(append(append(make([]json.RawMessage, 0, len(r.effective)+len(output)+len(in)), r.effective...), output...), in...)
	s.cachedBytes = r.effBytes + itemsBytes(output)
	s.effBytes = s.cachedBytes + itemsBytes(in)
	s.fault, s.fired, s.seq, s.outTokens, s.reasoningTokens, s.steered, s.outputDelay = nil, false, 0, 0, 0, false, 0
	return &s
}

// pause waits d of the cost model's output pacing and counts it.
func (r *reply) pause(ctx context.Context, d time.Duration) error {
	if d > 0 {
		r.outputDelay += d
	}
	return r.pace.wait(ctx, d)
}

// emit writes one event with its sequence number (and stream_id), firing the fault first when
// its turn has come.
func (r *reply) emit(ctx context.Context, typ string, ev map[string]any, terminal bool) error {
	if err := r.fire(ctx, terminal); err != nil {
		return err
	}
	if r.board != nil && !terminal {
		if err := r.ack(r.board.unacked(r.id)); err != nil {
			return err
		}
	}
	ev["type"] = typ
	ev["sequence_number"] = r.seq
	if r.streamID != "" {
		ev["stream_id"] = r.streamID
	}
	r.seq++
	return r.w.event(typ, ev)
}

func (r *reply) fire(ctx context.Context, terminal bool) error {
	f := r.fault
	if f == nil || r.fired || (r.seq < f.AfterEvents && !terminal) {
		return nil
	}
	switch f.Kind {
	case FaultSilence:
		r.fired = true
		// Held for Delay from the last event written, even when the
		// schedule is behind it (the request's parse came before).
		r.pace.catchUp()
		return r.pace.wait(ctx, f.Delay)
	case FaultCloseMidResponse:
		r.fired = true
		r.w.abort(f.closeCode())
		return errFaultClosed
	case FaultBinaryFrame, FaultMalformedFrame:
		r.fired = true
		return r.w.junk(f.Kind == FaultBinaryFrame)
	case FaultRateLimit:
		r.fired = true
		seq := r.seq
		r.seq++
		if err := r.w.errorEvent(rateLimited(r.model, r.fault.Delay), &seq, r.streamID); err != nil {
			return err
		}
		return errStreamError
	}
	return nil
}

// object is the response object carried by response.* events.
func (r *reply) object(status string, output []json.RawMessage) map[string]any {
	if output == nil {
		output = []json.RawMessage{}
	}
	tools := r.tools
	if tools == nil {
		tools = json.RawMessage("[]")
	}
	instructions := r.instructions
	if instructions == nil {
		instructions = json.RawMessage("null")
	}
	return map[string]any{
		"id": r.id, "object": "response", "created_at": r.createdAt, "status": status,
		"model": r.model, "output": output, "usage": nil, "error": nil, "incomplete_details": nil,
		"previous_response_id": nullable(r.prevID), "instructions": instructions, "tools": tools,
		"store": r.store, "reasoning": r.reasoningObject(),
	}
}

// reasoningObject is the response's reasoning settings: the effort (medium by default on a
// reasoning model) and the summary mode, null where they do not apply.
func (r *reply) reasoningObject() map[string]any {
	if !r.reasons {
		return map[string]any{"effort": nil, "summary": nil}
	}
	effort := r.effort
	if effort == "" {
		effort = "medium"
	}
	return map[string]any{"effort": effort, "summary": nullable(r.summary)}
}

// usage counts tokens at four bytes each; cached tokens are the prefix the cache supplied.
// output_tokens is what the output items count for as input when they are sent back (their
// JSON at four bytes a token, as input_tokens counts them), at least the deltas streamed plus
// the reasoning tokens: a client that adds a response's input and output tokens knows what
// its next request's input holds before the new items.
func (r *reply) usage(output []json.RawMessage) map[string]any {
	in := (r.effBytes + len(r.instructions) + len(r.tools) + 3) / 4
	out := max(r.outTokens+r.reasoningTokens, (itemsBytes(output)+3)/4)
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": r.cachedBytes / 4},
		"output_tokens":         out,
		"output_tokens_details": map[string]any{"reasoning_tokens": r.reasoningTokens},
		"total_tokens":          in + out,
	}
}

// newID returns prefix_ followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

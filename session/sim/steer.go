package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// MaxPendingSteers is how many accepted steering submissions one response may hold before
// another gets too_many_pending_steers.
const MaxPendingSteers = 8

// maxEndedIDs bounds the memory of ended responses that answers response_already_completed;
// an id forgotten beyond it answers response_not_found, as one from another connection does.
const maxEndedIDs = 1024

// steerSub is one accepted steering submission: its id, its input as user message items and
// its record.
type steerSub struct {
	id    string
	input []json.RawMessage
	rec   int
	acked bool // response.steer.accepted was written
}

// steerBoard is one WebSocket connection's steering state: the responses running on it (which
// accept steering), the ones waiting for client-owned tool output (which accept it too, and
// hold it for the client's explicit continuation: response.steer.pending) and the ones that
// ended (a steer for them is response_already_completed). One per wsConn, guarded by its own
// mutex; it dies with the connection, and so does what it holds.
type steerBoard struct {
	mu      sync.Mutex
	running map[string]*liveSteer // response id → its queue, while it streams
	waiting map[string]*waitSteer // completed response id → what its continuation needs and gets
	ended   map[string]bool
	order   []string // ended ids, oldest first, to bound ended
}

// waitSteer is a completed response that waits for client-owned tool output: the stubs of
// that output, the steering input held for its continuation and the response's next sequence
// number (its steering events go on in its stream). Fields guarded by steerBoard.mu.
type waitSteer struct {
	lane     string
	required []map[string]any
	subs     []steerSub
	seq      int
}

// liveSteer is the queue of one running response. Its fields are guarded by steerBoard.mu.
type liveSteer struct {
	lane string
	subs []steerSub
}

// start registers a response as running: from now on it accepts steering.
func (b *steerBoard) start(id, lane string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running == nil {
		b.running = make(map[string]*liveSteer)
	}
	b.running[id] = &liveSteer{lane: lane}
	for wid, w := range b.waiting {
		if w.lane == lane { // the lane moved on: that response no longer waits
			delete(b.waiting, wid)
		}
	}
}

// submit queues input for the response id: a running one acknowledges it from its own
// stream (held false); for one waiting for tool output, write gets its response.steer.accepted
// and response.steer.pending now, under the board's lock so that they keep the response's
// sequence (held true). Without support (Options.NoSteering) a live target answers
// steering_not_supported.
func (b *steerBoard) submit(id string, input []json.RawMessage, rec int, supported bool, write func(map[string]any) error) (sub steerSub, lane string, held bool, e *steerError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls, running := b.running[id]
	w := b.waiting[id]
	switch {
	case running:
		lane = ls.lane
	case w != nil:
		lane = w.lane
	case b.ended[id]:
		return sub, "", false, &steerError{"response_already_completed", "Response '" + id + "' has completed and no longer accepts steering input."}
	default:
		return sub, "", false, &steerError{"response_not_found", "Response '" + id + "' is not available on this connection."}
	}
	switch {
	case !supported:
		return sub, lane, false, &steerError{"steering_not_supported", "The model or response execution mode does not support steering."}
	case running && len(ls.subs) >= MaxPendingSteers, w != nil && len(w.subs) >= MaxPendingSteers:
		return sub, lane, false, &steerError{"too_many_pending_steers", "Too much steering input is pending for response '" + id + "'."}
	}
	sub = steerSub{id: newID("steer"), input: input, rec: rec}
	if running {
		ls.subs = append(ls.subs, sub)
		return sub, lane, false, nil
	}
	w.subs = append(w.subs, sub)
	_ = w.announce(id, sub, true, write)
	return sub, lane, true, nil
}

// announce writes sub's response.steer.accepted (when accepted is set) and its
// response.steer.pending in the waiting response id's sequence.
func (w *waitSteer) announce(id string, sub steerSub, accepted bool, write func(map[string]any) error) error {
	steer := map[string]any{"id": sub.id, "previous_response_id": id}
	events := []map[string]any{
		{"type": "response.steer.pending", "reason": "waiting_for_required_input", "required_input": w.required, "steer": steer},
	}
	if accepted {
		events = append([]map[string]any{{"type": "response.steer.accepted", "steer": steer}}, events...)
	}
	for _, ev := range events {
		ev["sequence_number"] = w.seq
		w.seq++
		if w.lane != "" {
			ev["stream_id"] = w.lane
		}
		if err := write(ev); err != nil {
			return err
		}
	}
	return nil
}

// settle ends the running response id, which completed waiting for the client-owned tool
// output required, and makes it wait: what it holds is acknowledged (if not yet) and reported
// pending now, what comes later as it comes. seq is its stream's next sequence number; the
// returned one follows these events. finish completes an acknowledged steer's record.
func (b *steerBoard) settle(id, lane string, required []map[string]any, seq int, write func(map[string]any) error, finish func(rec int)) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var subs []steerSub
	if ls := b.running[id]; ls != nil {
		subs = ls.subs
	}
	b.endLocked(id)
	w := &waitSteer{lane: lane, required: required, subs: subs, seq: seq}
	if b.waiting == nil {
		b.waiting = make(map[string]*waitSteer)
	}
	b.waiting[id] = w
	for _, sub := range subs {
		if err := w.announce(id, sub, !sub.acked, write); err != nil {
			return w.seq, err
		}
		if !sub.acked {
			finish(sub.rec)
		}
	}
	return w.seq, nil
}

// unacked returns the submissions of id not yet acknowledged and marks them acknowledged.
func (b *steerBoard) unacked(id string) []steerSub {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls, ok := b.running[id]
	if !ok {
		return nil
	}
	var out []steerSub
	for i := range ls.subs {
		if !ls.subs[i].acked {
			out = append(out, ls.subs[i])
			ls.subs[i].acked = true
		}
	}
	return out
}

// queued reports whether the running response id holds accepted input.
func (b *steerBoard) queued(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls, ok := b.running[id]
	return ok && len(ls.subs) > 0
}

// end stops id from accepting steering and returns what it holds, in submission order.
func (b *steerBoard) end(id string) []steerSub {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.endLocked(id)
}

func (b *steerBoard) endLocked(id string) []steerSub {
	ls := b.running[id]
	delete(b.running, id)
	if b.ended == nil {
		b.ended = make(map[string]bool)
	}
	b.ended[id] = true
	b.order = append(b.order, id)
	if len(b.order) > maxEndedIDs {
		delete(b.ended, b.order[0])
		b.order = b.order[1:]
	}
	if ls == nil {
		return nil
	}
	return ls.subs
}

// held is the steering input the waiting response id holds for its continuation.
func (b *steerBoard) held(id string) []steerSub {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.waiting[id]; w != nil {
		return w.subs
	}
	return nil
}

// takeParked ends the wait of id, whose continuation has come, and returns the steering input
// it held; later steers for id are response_already_completed.
func (b *steerBoard) takeParked(id string) []steerSub {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.waiting[id]
	delete(b.waiting, id)
	if w == nil {
		return nil
	}
	return w.subs
}

// steerError is why a steering submission was not committed: a response.steer.failed code.
type steerError struct{ code, message string }

// steerRequest is one parsed response.steer frame.
type steerRequest struct {
	prevID   string
	rawInput json.RawMessage   // input as sent, returned by response.steer.failed
	input    []json.RawMessage // as user message items
}

// parseSteer checks a response.steer frame as the API does: only type, previous_response_id
// and input, the input a string or a non-empty list of user messages whose content is a string
// or input_text/input_image/input_file parts.
func parseSteer(fields map[string]json.RawMessage) (steerRequest, *steerError) {
	var s steerRequest
	_ = json.Unmarshal(fields["previous_response_id"], &s.prevID)
	s.rawInput = fields["input"]
	for k := range fields {
		if k != "type" && k != "previous_response_id" && k != "input" {
			return s, &steerError{"invalid_input", fmt.Sprintf("Unknown parameter: '%s'. response.steer accepts only type, previous_response_id and input.", k)}
		}
	}
	if s.prevID == "" {
		return s, &steerError{"invalid_input", "Missing required parameter: 'previous_response_id'."}
	}
	var text string
	if json.Unmarshal(s.rawInput, &text) == nil {
		if text == "" {
			return s, &steerError{"invalid_input", "Invalid 'input': empty string."}
		}
		item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": text})
		s.input = []json.RawMessage{item}
		return s, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(s.rawInput, &items); err != nil || len(items) == 0 {
		return s, &steerError{"invalid_input", "Invalid 'input': expected a string or a non-empty array of user messages."}
	}
	for i, it := range items {
		if msg := steerItemProblem(it); msg != "" {
			return s, &steerError{"invalid_input", fmt.Sprintf("Invalid 'input[%d]': %s", i, msg)}
		}
	}
	s.input = items
	return s, nil
}

// steerItemProblem says what is wrong with one steering input item, "" when nothing is.
func steerItemProblem(raw json.RawMessage) string {
	var it map[string]json.RawMessage
	if json.Unmarshal(raw, &it) != nil || it == nil {
		return "expected an object."
	}
	for k := range it {
		if k != "type" && k != "role" && k != "content" {
			return fmt.Sprintf("unknown parameter '%s': steering accepts only user messages.", k)
		}
	}
	var typ, role string
	_ = json.Unmarshal(it["type"], &typ)
	_ = json.Unmarshal(it["role"], &role)
	if (it["type"] != nil && typ != "message") || role != "user" {
		return "steering accepts only messages with the user role."
	}
	var text string
	if json.Unmarshal(it["content"], &text) == nil {
		return ""
	}
	var parts []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(it["content"], &parts) != nil || len(parts) == 0 {
		return "content must be a string or an array of input_text, input_image and input_file parts."
	}
	for _, p := range parts {
		if p.Type != "input_text" && p.Type != "input_image" && p.Type != "input_file" {
			return fmt.Sprintf("content part type '%s' is not supported for steering.", p.Type)
		}
	}
	return ""
}

// steer answers one response.steer frame, recorded at i: it queues the input on the running
// response it names, whose reply acknowledges it, or answers response.steer.failed at once.
func (c *wsConn) steer(i int, fields map[string]json.RawMessage) {
	s, e := parseSteer(fields)
	c.s.records.update(i, func(r *Received) { r.PreviousResponseID, r.Input = s.prevID, s.input })
	lane := ""
	if e == nil {
		var sub steerSub
		var held bool
		write := func(ev map[string]any) error { return c.writeJSON(ev) }
		if sub, lane, held, e = c.steers.submit(s.prevID, s.input, i, !c.s.opts.NoSteering, write); e == nil {
			c.s.records.update(i, func(r *Received) { r.SteerID = sub.id })
			if held {
				c.s.records.finish(i, OutcomeSteerAccepted, "")
			} // else the target's reply writes response.steer.accepted
			return
		}
	}
	_ = c.writeJSON(steerFailed(s, "", e, 0, lane))
	c.s.records.finish(i, e.code, "")
}

// steerFailed is a response.steer.failed event; steerID is "" before an id was allocated.
func steerFailed(s steerRequest, steerID string, e *steerError, seq int, lane string) map[string]any {
	input := s.rawInput
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	steer := map[string]any{"previous_response_id": s.prevID, "input": input}
	if steerID != "" {
		steer["id"] = steerID
	}
	ev := map[string]any{"type": "response.steer.failed", "sequence_number": seq, "steer": steer,
		"error": map[string]any{"type": "invalid_request_error", "code": e.code, "message": e.message}}
	if lane != "" {
		ev["stream_id"] = lane
	}
	return ev
}

// steerInputs is the input of subs, in submission order.
func steerInputs(subs []steerSub) []json.RawMessage {
	var out []json.RawMessage
	for _, s := range subs {
		out = append(out, s.input...)
	}
	return out
}

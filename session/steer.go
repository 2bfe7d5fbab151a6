package session

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// steerAnswerTimeout bounds the wait, at a steered response's end, for the
// server's answer to a response.steer (acknowledged, held or refused).
const steerAnswerTimeout = 10 * time.Second

// steering is a conversation's steering of its running turn: whether the
// turn still takes input, the response streaming now (which takes it on
// the wire, response.steer) and what was sent for it. Input the wire cannot
// take (no response streaming, HTTP, a refusal) goes to the transcript's
// Steering queue, which the turn's next request carries.
//
// One per line, made with it; it lives as long as its Conversation. mu
// guards every field and is held across a response.steer's write, so that
// steers to one session go out one at a time; it is never held while the
// transcript's lock is (it may be taken before it).
type steering struct {
	mu     sync.Mutex
	open   bool              // a turn runs that will still read steered input
	conn   responses.Link    // the link of the response streaming now; nil between responses
	st     *responses.Stream // its stream
	id     string            // its id, once response.created said it
	sent   []json.RawMessage // items sent with response.steer for it, outcome not settled yet
	noWire bool              // the server does not support steering: the queue takes all
	// waiting: the response (id) ended waiting for its tools' outputs,
	// nothing streams; input is then stored at once, where it lands.
	waiting bool
	stored  bool  // sent is in the store already
	turnID  int64 // the running turn's
	queue   func(it json.RawMessage)
	// commit stores items at once, when nothing staged must come first
	// (Transcript.CommitSteeredNow).
	commit func(ctx context.Context, turnID int64, items []json.RawMessage) (bool, error)
	// pend stores items as pending (transcript.Steering.Pend): accepted
	// input survives a kill of the daemon before its commit.
	pend func(ctx context.Context, turnID int64, items []json.RawMessage) error
}

// SteerOutcome says what Steer did with the input.
type SteerOutcome int

const (
	// SteerIdle: no turn takes input now; nothing was done with it.
	SteerIdle SteerOutcome = iota
	// SteerInjected: the running turn takes it: the model reads it once,
	// in the running response (response.steer) or in the turn's next request.
	SteerInjected
)

// Steer gives input (user message items) to the running turn. It returns
// SteerIdle when no turn runs, or the running one has ended its loop: the
// caller then starts a turn with it (or refuses).
func (c *Conversation) Steer(ctx context.Context, input []json.RawMessage) (SteerOutcome, error) {
	s := c.line.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return SteerIdle, nil
	}
	// While tools run nothing streams: stored now, the input survives a
	// kill, and the next request carries it unless the server holds it.
	stored := false
	if s.waiting {
		var err error
		if stored, err = s.commit(ctx, s.turnID, input); err != nil {
			return SteerIdle, err
		}
	}
	// Anything else waits for its commit, where the server takes it: its
	// pending record is stored first.
	if !stored {
		if err := s.pend(ctx, s.turnID, input); err != nil {
			return SteerIdle, err
		}
	}
	if s.id != "" && s.sent == nil && !s.noWire {
		err := s.conn.Steer(ctx, s.st, s.id, input)
		if err == nil {
			s.sent, s.stored = input, stored
			return SteerInjected, nil
		}
		c.log.Debug("steer on the wire failed; the next request carries it", "err", err)
	}
	if stored {
		return SteerInjected, nil
	}
	for _, it := range input {
		s.queue(it)
	}
	return SteerInjected, nil
}

// opened marks the turn turnID as taking steered input.
func (s *steering) opened(turnID int64) {
	s.mu.Lock()
	s.open, s.turnID = true, turnID
	s.mu.Unlock()
}

// closeUnless ends the turn's intake unless input waits for another
// request (waiting reports that, under the lock): false means the turn
// must go on.
func (s *steering) closeUnless(waiting func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if waiting() {
		return false
	}
	s.open = false
	return true
}

// closed ends the turn's intake.
func (s *steering) closed() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}

// streaming records the response streaming on conn (stream st); created
// gives its id once response.created says it.
func (s *steering) streaming(conn responses.Link, st *responses.Stream) {
	s.mu.Lock()
	s.conn, s.st, s.id, s.waiting = conn, st, "", false
	s.mu.Unlock()
}

func (s *steering) created(st *responses.Stream, id string) {
	s.mu.Lock()
	if s.st == st {
		s.id = id
	}
	s.mu.Unlock()
}

// steerEnd is what became of the steering sent for a response at its end.
type steerEnd struct {
	// successor: the stream goes on with an automatic successor that
	// commits items, after the response's output.
	successor bool
	// pending: the server holds items for the client's explicit
	// continuation, prepended to the tool outputs it carries.
	pending bool
	items   []json.RawMessage
}

// ended settles, at the end of the response on st (its terminal event or
// its failure), what was sent for it: committed by a successor, held for a
// continuation, or back to the queue (refused, returned, or unknown after
// a lost connection: the server lost it with the connection, the next
// request carries it once). successor is what the response's terminal
// event said (Event.Continued).
func (s *steering) ended(ctx context.Context, st *responses.Stream, successor bool) steerEnd {
	s.mu.Lock()
	items := s.sent
	s.conn, s.st, s.id, s.sent = nil, nil, "", nil
	s.mu.Unlock()
	switch {
	case items == nil:
		return steerEnd{}
	case successor:
		return steerEnd{successor: true, items: items}
	}
	return s.settle(ctx, st, items, false)
}

// settle waits for the server's answer to items sent for the ended
// response of st: held for its continuation (pending), or back to the
// queue (unless stored: the next request carries them).
func (s *steering) settle(ctx context.Context, st *responses.Stream, items []json.RawMessage, stored bool) steerEnd {
	state := st.AwaitSteering(ctx, steerAnswerTimeout)
	if state.Pending > 0 {
		return steerEnd{pending: true, items: items}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if state.Code == "steering_not_supported" {
		s.noWire = true
	}
	for _, it := range items {
		if !stored {
			s.queue(it)
		}
	}
	return steerEnd{}
}

// waitsForTools makes the response id of st, which ended waiting for the
// outputs of the calls it made, the target of steering while they run: the
// server holds what it accepts for the continuation (response.steer.pending).
func (s *steering) waitsForTools(conn responses.Link, st *responses.Stream, id string) {
	s.mu.Lock()
	s.conn, s.st, s.id, s.waiting = conn, st, id, true
	s.mu.Unlock()
}

// beforeRequest settles, before the turn's next request is built, what was
// sent for the response that waited for its tools: held input is recorded
// ahead of the tool outputs and as held by the server, the rest joins the
// queue.
func (l *line) beforeRequest(ctx context.Context) {
	s := l.steer
	s.mu.Lock()
	st, id, items, stored := s.st, s.id, s.sent, s.stored
	s.conn, s.st, s.id, s.sent, s.waiting, s.stored = nil, nil, "", nil, false, false
	s.mu.Unlock()
	if items == nil {
		return
	}
	if se := s.settle(ctx, st, items, stored); se.pending {
		l.heldFor(id, items, stored)
	}
}

// commitSuccessor records the automatic successor of the steered response
// r (request o) that the stream goes on with: the steering items after r's
// output, where the server committed them, with the successor's request
// row. It returns the successor's request, for its settling.
func (l *line) commitSuccessor(ctx context.Context, turnID int64, conn responses.Link, o *outgoing, r *reply, items []json.RawMessage) (*outgoing, int64, error) {
	l.mu.Lock()
	base := l.base
	l.mu.Unlock()
	full := append([]json.RawMessage(nil), o.full...)
	if base != nil && base.responseID == r.id {
		full = append(full, base.output...)
	}
	full = append(full, items...)
	next := &outgoing{lane: o.lane, full: full, items: items, prev: r.id, kind: store.KindIncremental, key: o.key, epoch: o.epoch}
	reqID, err := l.tr.CommitSteered(ctx, store.Request{
		TurnID: turnID, Conn: conn.Name(), Kind: store.KindIncremental, PreviousResponseID: r.id,
		InputItems: len(items), Status: "sent", Sent: time.Now(),
	}, items)
	return next, reqID, err
}

// heldFor records steering items the server holds for the continuation
// of response id: in the transcript before the tool outputs not committed
// yet (where the server prepends them), and as held, so that the
// continuation carries the outputs alone (withoutHeld).
func (l *line) heldFor(id string, items []json.RawMessage, stored bool) {
	if !stored {
		l.tr.StageSteered(items)
	}
	l.mu.Lock()
	l.held = &heldInput{responseID: id, items: items}
	l.mu.Unlock()
}

// heldInput is steering input the server holds for the continuation of
// one response: a request chained on it must not carry it again.
type heldInput struct {
	responseID string
	items      []json.RawMessage
}

// withoutHeld takes the input held for the response prev off items, the
// new items of a request chained on prev: the server has them. A request
// that is not chained on it (a full one: the server's connection is gone)
// carries them.
func (l *line) withoutHeld(prev string, items []json.RawMessage) []json.RawMessage {
	l.mu.Lock()
	h := l.held
	l.held = nil
	l.mu.Unlock()
	if h == nil || prev == "" || prev != h.responseID {
		return items
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		if i := slices.IndexFunc(h.items, func(x json.RawMessage) bool { return bytes.Equal(x, it) }); i >= 0 {
			h.items = slices.Delete(slices.Clone(h.items), i, i+1)
			continue
		}
		out = append(out, it)
	}
	return out
}

// hasCalls reports whether output calls tools: the response waits for
// their outputs.
func hasCalls(output []json.RawMessage) bool {
	for _, it := range output {
		if _, ok := readItem(it).call(); ok {
			return true
		}
	}
	return false
}

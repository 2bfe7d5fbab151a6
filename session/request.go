package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/transcript"
	"github.com/hearthd/hearth/store"
)

// reply is a response that reached response.completed or
// response.incomplete.
type reply struct {
	id         string
	incomplete string // the incomplete reason, "" when completed
	output     []json.RawMessage
	usage      store.Usage

	// staged: the response only calls reads, and it is staged with its
	// end rather than stored (send); the next request's commit stores it.
	staged bool
	// early: its reads started before it ended; whoever acts on the
	// reply stops them (act).
	early *earlyReads
	// successor: an automatic successor follows it on its stream, which
	// commits the steering it was sent (Event.Continued).
	successor bool
	// unanswered: input stands after it in the transcript that no response
	// has answered (steering the server returned instead of continuing):
	// the turn sends another request.
	unanswered bool
}

// exchange sends one request for the conversation's current transcript
// (incremental when it can be), reads its response to the terminal event
// and, on success, commits the output items with the request's end before
// returning them. sink may be nil (warm-up). It owns the lane from send to
// the terminal event; on cancellation it aborts the response.
func (c *Conversation) exchange(ctx context.Context, turnID int64, generate bool, sink Sink) (*reply, error) {
	return c.line.send(ctx, turnID, generate, sink, nil, nil)
}

// exchangeAside sends the transcript (or view, when not nil: replay forms
// that replace it, sent in full) plus aside (a question about it, such as
// the compaction prompt) and returns the answer, which is not committed to
// the transcript: the request is logged, the transcript and the baseline
// stay as they were.
func (c *Conversation) exchangeAside(ctx context.Context, turnID int64, view, aside []json.RawMessage) (*reply, error) {
	return c.line.send(ctx, turnID, true, nil, view, aside)
}

// send is exchange and exchangeAside: one request, in steps — connect,
// prepare (the incremental rule's plan), commit what the request carries
// with its row, transmit, read the response, settle it.
func (l *line) send(ctx context.Context, turnID int64, generate bool, sink Sink, view, aside []json.RawMessage) (*reply, error) {
	steerable := sink != nil && generate && aside == nil
	if steerable {
		l.beforeRequest(ctx)
	}
	conn, lane, err := l.connect(ctx, generate, sink)
	if err != nil {
		return nil, err
	}
	o, err := l.prepare(conn, lane, generate, view, aside)
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	reqID, tell, err := l.commitRequest(ctx, turnID, conn, o)
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	st, err := conn.Send(ctx, lane, o.frame)
	tell() // the editor hears of what the commit stored once the request is on its way
	if err != nil {
		l.finish(reqID, "", "failed", err, time.Time{})
		return nil, err
	}
	var steered *reply // the response the stream's successor continues
	for {
		if steerable {
			l.steer.streaming(conn, st)
		}
		r, first, err := l.read(ctx, st, sink)
		var se steerEnd
		if steerable {
			se = l.steer.ended(ctx, st, r != nil && r.successor)
		}
		if steered != nil && errors.Is(err, responses.ErrNoSuccessor) {
			return l.noSuccessor(steered, reqID, err, sink), nil
		}
		if err != nil {
			return nil, l.failed(ctx, conn, st, reqID, err, first)
		}
		if r, err = l.settle(ctx, turnID, conn, o, reqID, r, first, sink != nil); err != nil {
			if se.successor {
				l.abort(conn, st)
			}
			return r, err
		}
		if se.pending {
			l.heldFor(r.id, se.items, false)
		}
		if steerable && !se.successor && hasCalls(r.output) {
			l.steer.waitsForTools(conn, st, r.id)
			if err := l.tr.StoreSteered(context.WithoutCancel(ctx), turnID); err != nil {
				return nil, err
			}
		}
		if !se.successor {
			if sink != nil {
				l.tellUsage(sink)
			}
			return r, nil
		}
		// The stream goes on with the successor, which answers the
		// steering as part of this turn: the partial answer is kept.
		r.early.stop()
		steered = r
		if o, reqID, err = l.commitSuccessor(context.WithoutCancel(ctx), turnID, conn, o, r, se.items); err != nil {
			l.abort(conn, st)
			return nil, err
		}
	}
}

// noSuccessor ends the exchange of the steered response r when the server
// returned its steering input instead of continuing it: the request
// committed for the successor (reqID) failed, the input stands after r in
// the transcript, and r, the lane's latest response, is the baseline the
// turn's next request carries it on.
func (l *line) noSuccessor(r *reply, reqID int64, err error, sink Sink) *reply {
	l.log.Info("no successor for the steered response; the next request carries the steering", "response", r.id, "err", err)
	l.finish(reqID, "", "failed", err, time.Time{})
	l.tellUsage(sink)
	r.unanswered = true
	return r
}

// outgoing is one request, prepared: what it sends and what the store and
// the baseline are told of it.
type outgoing struct {
	lane   string
	full   []json.RawMessage // the whole input, as replay forms: the next baseline's
	items  []json.RawMessage // what goes out: full, or only its new items
	prev   string            // previous_response_id; "" for a full request
	reason string            // why it is full
	kind   store.RequestKind
	key    []byte       // the settings' encoding
	frame  []byte       // the response.create frame
	batch  store.Staged // what the transcript had staged: committed with the request's row
	aside  bool         // its answer is the caller's, not the transcript's
	epoch  uint64       // the transcript's epoch full was taken at
}

// connect returns the link and lane the conversation's next request goes
// out on, which it owns until the terminal event (or Release).
func (l *line) connect(ctx context.Context, generate bool, sink Sink) (responses.Link, string, error) {
	l.mu.Lock()
	lane := l.lane
	l.mu.Unlock()
	if !l.client.api.Lanes() {
		lane = ""
	}
	conn, err := l.client.api.Link(ctx, l.client.keyFor(l.id), lane)
	if err != nil {
		return nil, "", err
	}
	if sink != nil {
		if n := l.client.api.TakeNotice(); n != "" {
			Notify(sink, NoticeWarning, n)
		}
	}
	if !generate && conn.Transport() == "http" {
		// Over HTTP with store:false there is nothing to warm.
		return nil, "", errNoWarmupOverHTTP
	}
	if err := conn.Acquire(ctx, lane); err != nil {
		return nil, "", err
	}
	return conn, lane, nil
}

// prepare builds the request for the transcript and what is staged (or for
// view, replay forms sent in full instead), plus aside, and plans it
// against the baseline.
func (l *line) prepare(conn responses.Link, lane string, generate bool, view, aside []json.RawMessage) (*outgoing, error) {
	set, key, err := l.settings()
	if err != nil {
		return nil, err
	}
	head, err := l.head()
	if err != nil {
		return nil, err
	}
	o := &outgoing{lane: lane, aside: aside != nil, epoch: l.tr.View().Epoch()}
	o.full, o.batch = l.tr.Next()
	l.mu.Lock()
	base := l.base
	if base != nil && base.epoch != o.epoch {
		base = nil // a compaction, a rewind or a lost response's end: the server's chain is not the view's
	}
	if view != nil {
		o.full, base = view, nil
	}
	// The guidance first (guidance.go): a baseline begins with it, and an
	// incremental request leaves it, with the rest of the prefix, out.
	o.full = append(append(append(make([]json.RawMessage, 0, len(head)+len(o.full)+len(aside)), head...), o.full...), aside...)
	l.mu.Unlock()
	o.key = key
	o.items, o.prev, o.reason = plan(base, conn, key, o.full, l.client.Config().DisableIncremental)
	if !o.aside {
		o.items = l.withoutHeld(o.prev, o.items)
	}
	ev := responses.Create{Type: "response.create", Settings: set, Encoded: key, StreamID: lane, PreviousResponseID: o.prev, Input: o.items}
	o.kind = store.KindIncremental
	switch {
	case !generate:
		f := false
		ev.Generate = &f
		o.kind = store.KindWarmup
		if o.reason == "" {
			o.reason = reasonWarmup
		}
	case o.prev == "":
		o.kind = store.KindFull
	}
	if o.frame, err = ev.Frame(); err != nil {
		return nil, err
	}
	return o, nil
}

// commitRequest commits what the request carries that the store does not
// hold yet (the transcript's batch: a staged response and outputs) with the
// request's row, in one transaction, before it is sent. tell tells what
// waited for the batch; the caller calls it once the request is on its way.
func (l *line) commitRequest(ctx context.Context, turnID int64, conn responses.Link, o *outgoing) (reqID int64, tell func(), err error) {
	reqID, tell, err = l.tr.CommitRequest(ctx, store.Request{
		TurnID: turnID, Conn: conn.Name(), Kind: o.kind, FullReason: o.reason,
		PreviousResponseID: o.prev, BytesSent: int64(len(o.frame)), InputItems: len(o.items),
		Status: "sent", Sent: time.Now(),
	}, o.batch)
	if err != nil {
		return 0, nil, err
	}
	l.count(o.kind, len(o.frame))
	if o.prev != "" {
		l.client.counters.bytesSaved.Add(int64(savedBytes(o.prev, o.full[:len(o.full)-len(o.items)])))
	}
	return reqID, tell, nil
}

// savedBytes is what the full request would have cost more than an
// incremental one chained on prev: the items left out (each with its comma)
// less the previous_response_id member. The first request after an empty
// warm-up leaves nothing out: it saved nothing, rather than a few bytes
// less than nothing.
func savedBytes(prev string, left []json.RawMessage) int {
	saved := -len(`,"previous_response_id":""`) - len(prev)
	for _, it := range left {
		saved += len(it) + 1
	}
	return max(saved, 0)
}

// failed ends a request whose response failed: the baseline is gone, the
// stream is left or walked away from as Judge says, and the request's row
// records the outcome. It returns err with its verdict (judgedError).
func (l *line) failed(ctx context.Context, conn responses.Link, st *responses.Stream, reqID int64, err error, first time.Time) error {
	l.forget()
	status := "failed"
	if ctx.Err() != nil {
		status = "cancelled"
	}
	v := responses.Judge(err)
	switch v.Stream {
	case responses.WalkAway:
		l.abort(conn, st)
	case responses.DropConn:
		conn.Abort(st, false)
	}
	id := ""
	var re *responses.ResponseError
	if errors.As(err, &re) {
		id = re.ResponseID
	}
	l.finish(reqID, id, status, err, first)
	return &judgedError{err: err, v: v}
}

// settle stores a response with its request's end, in one transaction,
// before anything acts on it: a tool never runs for an item the store does
// not hold. Reads are the exception: they change nothing, so a response
// that only calls reads is staged instead, with its end, and committed with
// the reads' outputs and the next request's row: a read round trip commits
// once. The editor hears of those calls once they are stored (runTools).
// An answer aside is the caller's: only the request's end is stored.
// The response becomes the baseline.
func (l *line) settle(ctx context.Context, turnID int64, conn responses.Link, o *outgoing, reqID int64, r *reply, first time.Time, turn bool) (*reply, error) {
	status := store.RequestCompleted
	if r.incomplete != "" {
		status = store.RequestIncomplete
	}
	end := &store.Completion{ID: reqID, ResponseID: r.id, Status: status, FirstEvent: first, Finished: time.Now(), Usage: r.usage}
	if !o.aside && turn && l.box.onlyReads(r.output) {
		r.staged = l.tr.StageResponse(end, r.output) // nothing may come before the response
	}
	b := &baseline{conn: conn, lane: o.lane, settings: o.key, input: o.full, responseID: r.id, epoch: o.epoch}
	var err error
	switch {
	case r.staged:
		b.output = transcript.ReplayForms(nil, r.output)
	case o.aside:
		giveBack(r.output)
		err = l.tr.Turns().CommitEnd(context.WithoutCancel(ctx), turnID, end)
	default:
		giveBack(r.output) // before the database's own copies of a big answer
		b.output, err = l.tr.CommitResponse(context.WithoutCancel(ctx), turnID, end, r.output)
	}
	if err != nil {
		l.forget()
		r.early.stop()
		return nil, err
	}
	l.client.counters.addUsage(r.usage)
	if o.aside {
		return r, nil
	}
	pending := 0
	if r.staged {
		pending = len(r.output)
	}
	l.tr.Counted(r.usage, pending)
	l.mu.Lock()
	l.base = b
	l.mu.Unlock()
	return r, nil
}

func (l *line) count(kind store.RequestKind, n int) {
	k := &l.client.counters
	k.bytesSent.Add(int64(n))
	switch kind {
	case store.KindWarmup:
		k.warmups.Add(1)
	case store.KindFull:
		k.full.Add(1)
	default:
		k.incremental.Add(1)
	}
}

func (l *line) finish(reqID int64, respID, status string, err error, first time.Time) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	// The request row is bookkeeping: record it even when the turn's
	// context is gone.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ferr := l.tr.Turns().FinishRequest(ctx, reqID, respID, status, msg, first); ferr != nil {
		l.log.Warn("record request outcome", "err", ferr)
	}
}

// abort stops an in-flight response. There is no cancel event: the socket
// must close. When other lanes are busy on it, the conversation walks away
// from its lane instead (discarding what still arrives) so that siblings'
// turns survive, and continues on a fresh lane. Over HTTP only the
// request is cancelled.
func (l *line) abort(conn responses.Link, st *responses.Stream) {
	conn.Abort(st, l.client.api.Lanes())
	if st.Abandoned() {
		l.mu.Lock()
		l.lane = l.client.api.NewLane()
		l.base = nil
		l.mu.Unlock()
	}
}

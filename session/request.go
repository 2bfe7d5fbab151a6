package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearthd/hearth/session/responses"
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
}

// exchange sends one request for the conversation's current transcript
// (incremental when it can be), reads its response to the terminal event
// and, on success, commits the output items with the request's end before
// returning them. sink may be nil (warm-up). It owns the lane from send to
// the terminal event; on cancellation it aborts the response.
func (c *Conversation) exchange(ctx context.Context, turnID int64, generate bool, sink Sink) (*reply, error) {
	return c.send(ctx, turnID, generate, sink, nil, nil)
}

// exchangeAside sends the transcript (or view, when not nil: replay forms
// that replace it, sent in full) plus aside (a question about it, such as
// the compaction prompt) and returns the answer, which is not committed to
// the transcript: the request is logged, the transcript and the baseline
// stay as they were.
func (c *Conversation) exchangeAside(ctx context.Context, turnID int64, view, aside []json.RawMessage) (*reply, error) {
	return c.send(ctx, turnID, true, nil, view, aside)
}

// send is exchange and exchangeAside: one request, in steps — connect,
// prepare (the incremental rule's plan), commit what the request carries
// with its row, transmit, read the response, settle it.
func (c *Conversation) send(ctx context.Context, turnID int64, generate bool, sink Sink, view, aside []json.RawMessage) (*reply, error) {
	conn, lane, err := c.connect(ctx, generate, sink)
	if err != nil {
		return nil, err
	}
	o, err := c.prepare(conn, lane, generate, view, aside)
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	reqID, tell, err := c.commitRequest(ctx, turnID, conn, o)
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	st, err := conn.Send(ctx, lane, o.frame)
	tell() // the editor hears of what the commit stored once the request is on its way
	if err != nil {
		c.finish(reqID, "", "failed", err, time.Time{})
		return nil, err
	}
	r, first, err := c.read(ctx, st, sink)
	if err != nil {
		return nil, c.failed(ctx, conn, st, reqID, err, first)
	}
	r, err = c.settle(ctx, turnID, conn, o, reqID, r, first, sink != nil)
	if err == nil && sink != nil {
		c.tellUsage(sink)
	}
	return r, err
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
	batch  store.Staged // what the ledger had staged: committed with the request's row
	aside  bool         // its answer is the caller's, not the transcript's
}

// connect returns the link and lane the conversation's next request goes
// out on, which it owns until the terminal event (or Release).
func (c *Conversation) connect(ctx context.Context, generate bool, sink Sink) (responses.Link, string, error) {
	c.mu.Lock()
	lane := c.lane
	c.mu.Unlock()
	if !c.client.api.Lanes() {
		lane = ""
	}
	conn, err := c.client.api.Link(ctx, c.client.keyFor(c), lane)
	if err != nil {
		return nil, "", err
	}
	if sink != nil {
		if n := c.client.api.TakeNotice(); n != "" {
			sink.Notice(n)
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
func (c *Conversation) prepare(conn responses.Link, lane string, generate bool, view, aside []json.RawMessage) (*outgoing, error) {
	c.convert()
	c.mu.Lock()
	o := &outgoing{lane: lane, full: append([]json.RawMessage(nil), c.inputLocked()...), batch: c.ledger.batch(), aside: aside != nil}
	for _, it := range o.batch.Items {
		o.full = replayForms(o.full, []json.RawMessage{it.Data})
	}
	base := c.base
	if view != nil {
		o.full, base = append([]json.RawMessage(nil), view...), nil
	}
	o.full = append(o.full, aside...)
	c.mu.Unlock()
	set, key, err := c.settings()
	if err != nil {
		return nil, err
	}
	o.key = key
	o.items, o.prev, o.reason = plan(base, conn, lane, key, o.full, c.client.Config().DisableIncremental)
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
// hold yet (the ledger's batch: a staged response and outputs) with the
// request's row, in one transaction, before it is sent. tell tells what
// waited for the batch; the caller calls it once the request is on its way.
func (c *Conversation) commitRequest(ctx context.Context, turnID int64, conn responses.Link, o *outgoing) (reqID int64, tell func(), err error) {
	reqID, _, err = c.db.InsertRequestAfter(ctx, store.Request{
		SessionID: c.id, TurnID: turnID, Conn: conn.Name(), Kind: o.kind, FullReason: o.reason,
		PreviousResponseID: o.prev, BytesSent: int64(len(o.frame)), InputItems: len(o.items),
		Status: "sent", Sent: time.Now(),
	}, o.batch)
	if err != nil {
		return 0, nil, storeErr(fmt.Errorf("record request: %w", err))
	}
	c.mu.Lock()
	tell = c.ledger.stored(o.batch)
	c.mu.Unlock()
	c.count(o.kind, len(o.frame))
	if o.prev != "" {
		c.client.counters.bytesSaved.Add(int64(savedBytes(o.prev, o.full[:len(o.full)-len(o.items)])))
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
func (c *Conversation) failed(ctx context.Context, conn responses.Link, st *responses.Stream, reqID int64, err error, first time.Time) error {
	c.forgetBaseline()
	status := "failed"
	if ctx.Err() != nil {
		status = "cancelled"
	}
	v := responses.Judge(err)
	switch v.Stream {
	case responses.WalkAway:
		c.abort(conn, st)
	case responses.DropConn:
		conn.Abort(st, false)
	}
	id := ""
	var re *responses.ResponseError
	if errors.As(err, &re) {
		id = re.ResponseID
	}
	c.finish(reqID, id, status, err, first)
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
func (c *Conversation) settle(ctx context.Context, turnID int64, conn responses.Link, o *outgoing, reqID int64, r *reply, first time.Time, turn bool) (*reply, error) {
	status := store.RequestCompleted
	if r.incomplete != "" {
		status = store.RequestIncomplete
	}
	end := &store.Completion{ID: reqID, ResponseID: r.id, Status: status, FirstEvent: first, Finished: time.Now(), Usage: r.usage}
	var out []store.NewItem
	if !o.aside {
		out = make([]store.NewItem, len(r.output))
		for i, it := range r.output {
			out[i] = store.NewItem{Origin: store.OriginOutput, Data: it}
		}
	}
	if !o.aside && turn && c.onlyReads(r.output) {
		c.mu.Lock()
		r.staged = c.ledger.stageResponse(end, out) // nothing may come before the response
		c.mu.Unlock()
	}
	if !r.staged {
		giveBack(r.output) // before the database's own copies of a big answer
		if _, err := c.db.CommitStaged(context.WithoutCancel(ctx), c.id, turnID, store.Staged{End: end, Items: out}); err != nil {
			c.forgetBaseline()
			r.early.stop()
			return nil, storeErr(fmt.Errorf("commit the response: %w", err))
		}
		if !o.aside {
			// Stored as received; what stays in memory is the replay form,
			// made in the item's own bytes: one copy of an answer.
			for i, it := range r.output {
				if form, ok := replayInPlace(it); ok {
					r.output[i] = form
				}
			}
		}
	}
	c.client.counters.addUsage(r.usage)
	if o.aside {
		return r, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &baseline{conn: conn, lane: o.lane, settings: o.key, input: o.full, responseID: r.id}
	if r.staged {
		b.output = replayForms(nil, r.output)
	} else {
		n := len(c.inputLocked())
		c.ledger.committed = append(c.ledger.committed, r.output...)
		in := c.inputLocked()
		b.output = in[n:len(in):len(in)]
	}
	c.base = b
	c.countedLocked(r)
	return r, nil
}

// onlyReads reports whether output calls tools and every one of them may
// run concurrently (ConcurrentTools: reads, which change nothing).
func (c *Conversation) onlyReads(output []json.RawMessage) bool {
	conc, ok := c.tools.(ConcurrentTools)
	if !ok {
		return false
	}
	calls := 0
	for _, it := range output {
		if call, ok := readItem(it).call(); ok {
			if !conc.Concurrent(call.Name) {
				return false
			}
			calls++
		}
	}
	return calls > 0
}

func (c *Conversation) count(kind store.RequestKind, n int) {
	k := &c.client.counters
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

func (c *Conversation) finish(reqID int64, respID, status string, err error, first time.Time) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	// The request row is bookkeeping: record it even when the turn's
	// context is gone.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ferr := c.db.FinishRequest(ctx, reqID, respID, status, msg, first, time.Now()); ferr != nil {
		c.log.Warn("record request outcome", "err", ferr)
	}
}

func (c *Conversation) forgetBaseline() {
	c.mu.Lock()
	c.base = nil
	c.mu.Unlock()
}

// abort stops an in-flight response. There is no cancel event: the socket
// must close. When other lanes are busy on it, the conversation walks away
// from its lane instead (discarding what still arrives) so that siblings'
// turns survive, and continues on a fresh lane. Over HTTP only the
// request is cancelled.
func (c *Conversation) abort(conn responses.Link, st *responses.Stream) {
	conn.Abort(st, c.client.api.Lanes())
	if st.Abandoned() {
		c.mu.Lock()
		c.lane = c.client.api.NewLane()
		c.base = nil
		c.mu.Unlock()
	}
}

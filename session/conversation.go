package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hearthd/hearth/store"
)

// Sink receives a turn's progress in order, one call at a time, from the
// goroutine running Prompt — Text and Thought also from the goroutine
// reading the model's connection while Prompt waits for it. The daemon
// turns it into ACP session/update notifications.
type Sink interface {
	Text(delta string)
	// Thought is a delta of the model's reasoning summary.
	Thought(delta string)
	// ToolCall reports a call's progress: status is pending (the model
	// started it), in_progress (arguments complete, running), completed or
	// failed (res set).
	ToolCall(call ToolCall, status string, res *ToolResult)
	// Notice is something the user should know about the turn's transport
	// (a fallback to HTTP, a retry after a lost connection).
	Notice(text string)
}

// Options configure Open.
type Options struct {
	ID     string // the ACP session id; the store's session row must exist
	Client *Client
	DB     *store.DB
	Tools  Tools
	Log    *slog.Logger

	// Items is the stored transcript when the caller has read it already
	// (session/load streams it to the editor as it reads): Open then does
	// not read it again. Nil: Open reads it from DB.
	Items []store.Item

	// Initial items (e.g. the workspace's AGENTS.md) are committed when the
	// transcript is empty, before the warm-up, so they are part of the
	// baseline.
	Initial []json.RawMessage
}

// Conversation is one ACP session's agent loop: its transcript, its lane on
// the workspace's Client and its baseline there. Created by Open when a
// session is created or loaded; Close cancels the warm-up and waits for it.
// Prompt calls run one at a time (the conversation's serial loop).
type Conversation struct {
	id     string
	client *Client
	db     *store.DB
	tools  Tools
	log    *slog.Logger

	turn chan struct{} // token held by the running Prompt: one turn at a time

	mu     sync.Mutex // guards the fields from lane to lastInput
	lane   string
	ledger ledger            // the transcript and what is staged for the next commit (commit.go)
	input  []json.RawMessage // the replay forms of ledger.committed[:converted]: what a full request sends
	// converted is how many committed items have their replay form in
	// input (converted lazily: Open stays fast).
	converted int
	base      *baseline
	warm      *warmup
	closed    bool

	// The model's view after a compaction: the transcript is the session's
	// initial items, the summary, then the items after through (compact.go).
	prefix    int   // transcript items before the first stored item after through
	through   int64 // the last stored item the summary replaces; 0 = none
	initialN  int   // leading items outside any turn (AGENTS.md), kept by a compaction
	turnStart int   // transcript index of the running turn's first item
	lastInput int   // input tokens of the last response (its usage): the view's size

	setCache settingsCache

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the warm-up goroutine
}

// Open loads the conversation's transcript from the store. A transcript
// that ends in function calls without outputs (the daemon died mid-tool) is
// repaired with outputs saying so, so the next request is valid.
func Open(ctx context.Context, o Options) (*Conversation, error) {
	items := o.Items
	if items == nil {
		var err error
		if items, err = o.DB.Items(ctx, o.ID); err != nil {
			return nil, storeErr(fmt.Errorf("load transcript of %s: %w", o.ID, err))
		}
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &Conversation{
		id: o.ID, client: o.Client, db: o.DB, tools: o.Tools, log: log.With("session", o.ID),
		turn: make(chan struct{}, 1), lane: o.Client.api.NewLane(), ctx: cctx, cancel: cancel,
	}
	o.Client.register(c)
	for _, it := range items {
		if it.TurnID != 0 {
			break
		}
		c.initialN++
	}
	last, err := o.DB.LastCompaction(ctx, o.ID)
	switch {
	case err == nil:
		c.viewAfter(items, last)
	case errors.Is(err, store.ErrNotFound):
		for _, it := range items {
			c.ledger.committed = append(c.ledger.committed, it.Data)
		}
	default:
		c.Close()
		return nil, storeErr(fmt.Errorf("load transcript of %s: %w", o.ID, err))
	}
	if len(c.ledger.committed) == 0 && len(o.Initial) > 0 {
		var init []store.NewItem
		for _, it := range o.Initial {
			init = append(init, store.NewItem{Origin: store.OriginInput, Data: it})
		}
		if err := c.commit(ctx, 0, init); err != nil {
			c.Close()
			return nil, err
		}
		c.initialN = len(init)
	}
	if err := c.repair(ctx, 0); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// repair answers function calls that have no output — the daemon died
// mid-tool, or a tool's output could not be committed — so that the next
// request is valid. The tool is never run again.
func (c *Conversation) repair(ctx context.Context, turnID int64) error {
	c.mu.Lock()
	missing := unansweredCalls(c.ledger.committed)
	c.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	var fix []store.NewItem
	for _, id := range missing {
		fix = append(fix, store.NewItem{Origin: store.OriginInput,
			Data: functionCallOutput(id, "error: interrupted — hearth stopped before this tool finished; run it again if still needed")})
	}
	return c.commit(ctx, turnID, fix)
}

// ID returns the session id.
func (c *Conversation) ID() string { return c.id }

// convert brings the replay forms up to date outside the lock, so that a
// long transcript's first conversion never holds up the session's other
// users (a session/load replay reading the transcript).
func (c *Conversation) convert() {
	c.mu.Lock()
	from, todo := c.converted, c.ledger.committed[c.converted:]
	c.mu.Unlock()
	if len(todo) < 64 {
		return // cheap enough under the lock
	}
	forms := replayForms(nil, todo) // committed items never change: safe to read unlocked
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.converted == from {
		c.input = append(c.input, forms...)
		c.converted = from + len(todo)
	}
}

// inputLocked returns the replay forms of the whole transcript, converting
// the items appended since the last call. A conversation opened on a long
// transcript converts it on its first request (the warm-up, in the
// background), not while session/load waits. Called with mu held.
func (c *Conversation) inputLocked() []json.RawMessage {
	c.input = replayForms(c.input, c.ledger.committed[c.converted:])
	c.converted = len(c.ledger.committed)
	return c.input
}

// Close cancels a running warm-up and waits for it. A running Prompt ends
// through its own context.
func (c *Conversation) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	lane := c.lane
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.client.unregister(c, lane)
	return nil
}

// unansweredCalls lists call ids of function calls with no output.
func unansweredCalls(items []json.RawMessage) []string {
	answered := map[string]bool{}
	var calls []string
	for _, it := range items {
		if !bytes.Contains(it, []byte(`"function_call`)) {
			continue // most items: no decode
		}
		var h struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(it, &h)
		switch h.Type {
		case "function_call":
			calls = append(calls, h.CallID)
		case "function_call_output":
			answered[h.CallID] = true
		}
	}
	var missing []string
	for _, id := range calls {
		if !answered[id] {
			missing = append(missing, id)
		}
	}
	return missing
}

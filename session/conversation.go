package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

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

	// Choice is the session's own model and reasoning effort, over the
	// Client's configuration (SetChoice).
	Choice Choice
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

	mu     sync.Mutex // guards the fields from lane to compactedAt
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
	// What the last response's usage covers (compact.go, nextInput): its
	// output tokens, and how many items of the view (committed, then
	// staged) it counted, input and output.
	lastOutput, counted int
	compactedAt         int // the view's length after the last compaction: compact again only once it grew

	setCache settingsCache
	choice   atomic.Pointer[Choice] // the session's own model and effort (choice.go)

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
	c.choice.Store(&o.Choice)
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

// repair answers tool calls that have no output — the daemon died
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
	for _, call := range missing {
		fix = append(fix, store.NewItem{Origin: store.OriginInput,
			Data: callOutput(call, "error: interrupted — hearth stopped before this tool finished; run it again if still needed")})
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

// outputCallID reads the call id of an output item hearth wrote itself
// (callOutput: a function_call_output or custom_tool_call_output, fields
// in a fixed order) without decoding its output: a third of a long
// session's items, and most of its bytes; opening it decoded them all.
func outputCallID(it json.RawMessage) (string, bool) {
	rest, ok := bytes.CutPrefix(it, []byte(`{"type":"function_call_output","call_id":"`))
	if !ok {
		rest, ok = bytes.CutPrefix(it, []byte(`{"type":"custom_tool_call_output","call_id":"`))
	}
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// unansweredCalls lists the tool calls (function or custom) with no
// output.
func unansweredCalls(items []json.RawMessage) []ToolCall {
	answered := map[string]bool{}
	var calls []ToolCall
	for _, it := range items {
		if id, ok := outputCallID(it); ok {
			answered[id] = true
			continue
		}
		if !bytes.Contains(it, []byte(`"function_call`)) && !bytes.Contains(it, []byte(`"custom_tool_call`)) {
			continue // most items: no decode
		}
		var h struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(it, &h)
		switch {
		case isCall(h.Type):
			calls = append(calls, ToolCall{CallID: h.CallID, Custom: h.Type == "custom_tool_call"})
		case isOutput(h.Type):
			answered[h.CallID] = true
		}
	}
	var missing []ToolCall
	for _, call := range calls {
		if !answered[call.CallID] {
			missing = append(missing, call)
		}
	}
	return missing
}

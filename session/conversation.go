package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/hearthd/hearth/store"
)

// Tools is what a conversation's model may call. The daemon implements it
// on the workspace's toolset and the editor's permission prompts. Run never
// fails: a bad call is a ToolResult with IsError and an explanation.
type Tools interface {
	Specs() []json.RawMessage
	Run(ctx context.Context, call ToolCall) ToolResult
}

// ConcurrentTools is implemented by Tools whose calls of some tools (those
// that only read, and never ask the user) may run side by side: the calls
// of one response to such tools run concurrently, their outputs still
// committed in call order.
type ConcurrentTools interface {
	Concurrent(name string) bool
}

// ToolCall is one function call the model made.
type ToolCall struct {
	CallID    string
	Name      string
	Arguments string // JSON text as the model wrote it; may be invalid
}

// ToolResult is a tool's answer, sent back as function_call_output.
type ToolResult struct {
	Output  string
	IsError bool
	// Images go to the model after Output, as input_image parts of the
	// function_call_output (read_file of an image).
	Images []Image

	// For the editor only, never sent to the model.
	Title     string
	Kind      string   // ACP tool kind: read, search, edit, execute
	Locations []string // workspace-relative paths the call touched
	Diff      *Diff    // what an edit changed

	// Seen is what the model now knows of a file (the read set), committed
	// with the output.
	Seen *store.SeenWrite
}

// Diff is a file's content before and after an edit, for the editor.
type Diff struct {
	Path string `json:"path"`          // workspace-relative
	Old  string `json:"old,omitempty"` // "" for a new file
	New  string `json:"new"`
}

// Sink receives a turn's progress in order, from the goroutine running
// Prompt. The daemon turns it into ACP session/update notifications.
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

	mu         sync.Mutex // guards the fields from lane to lastInput
	lane       string
	transcript []json.RawMessage // the model's view, in order: the committed items (after a compaction, see prefix)
	input      []json.RawMessage // the replay forms of transcript[:converted]: what a full request sends
	converted  int               // transcript items whose replay form is in input (converted lazily: Open stays fast)
	base       *baseline
	warm       *warmup
	closed     bool
	unanswered bool // a tool's output failed to commit: calls without output to repair before the next request

	// Staged by the turn: reads' outputs and what the model saw of files,
	// committed with the next request's row in one transaction (send) or
	// at the end of the turn (flushPending); what else is staged (the
	// user's message, a write's output) is flushed at once.
	pending     []store.NewItem
	pendingSeen []store.SeenWrite
	pendingEnd  *store.Completion   // a staged response's end (its output leads pending)
	pendingDone []func(stored bool) // told once the staged items are in the store (or lost)

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
			return nil, fmt.Errorf("load transcript of %s: %w", o.ID, err)
		}
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &Conversation{
		id: o.ID, client: o.Client, db: o.DB, tools: o.Tools, log: log.With("session", o.ID),
		turn: make(chan struct{}, 1), lane: o.Client.newLane(), ctx: cctx, cancel: cancel,
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
			c.transcript = append(c.transcript, it.Data)
		}
	default:
		c.Close()
		return nil, fmt.Errorf("load transcript of %s: %w", o.ID, err)
	}
	if len(c.transcript) == 0 && len(o.Initial) > 0 {
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
	missing := unansweredCalls(c.transcript)
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

// Transcript returns a copy of the model's view: the committed items, or
// after a compaction the initial items, the summary and the items since.
func (c *Conversation) Transcript() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.transcript...)
}

// settingsFrom is what a conversation's settings are built from; the
// settings and their encoding are kept until it changes (settingsCache).
type settingsFrom struct {
	model, instructions, effort, summary string
	specs                                []json.RawMessage
}

func (a settingsFrom) same(b settingsFrom) bool {
	return a.model == b.model && a.instructions == b.instructions && a.effort == b.effort &&
		a.summary == b.summary && slices.EqualFunc(a.specs, b.specs, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// settingsCache holds a conversation's last settings and their encoding:
// encoding the tools and instructions (kilobytes) on every request cost
// each round trip tens of microseconds. It lives as long as its
// Conversation.
type settingsCache struct {
	mu   sync.Mutex
	from settingsFrom
	set  settings
	key  []byte // set.key(); nil until the first request
}

// settings are this conversation's non-input request fields, with their
// encoding (settings.key), rebuilt only when the configuration or the
// tools change.
func (c *Conversation) settings() (settings, []byte) {
	cfg := c.client.Config()
	from := settingsFrom{model: cfg.Model, instructions: cfg.Instructions, effort: cfg.ReasoningEffort, summary: cfg.ReasoningSummary}
	if c.tools != nil {
		from.specs = c.tools.Specs()
	}
	k := &c.setCache
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == nil || !k.from.same(from) {
		k.from, k.set = from, buildSettings(cfg, from.specs, c.id)
		k.key = k.set.key()
	}
	return k.set, k.key
}

// buildSettings makes the settings of a conversation.
func buildSettings(cfg Config, specs []json.RawMessage, id string) settings {
	var tools json.RawMessage
	if len(specs) > 0 {
		tools, _ = json.Marshal(specs)
	}
	s := settings{
		Model:          cfg.Model,
		Instructions:   cfg.Instructions,
		Tools:          tools,
		Store:          false,
		PromptCacheKey: id,
	}
	if cfg.ReasoningEffort != "" && cfg.ReasoningEffort != "none" {
		s.Reasoning = &reasoning{Effort: cfg.ReasoningEffort}
		if cfg.ReasoningSummary != "none" {
			s.Reasoning.Summary = cfg.ReasoningSummary
		}
		s.Include = []string{"reasoning.encrypted_content"}
	}
	if tools != nil {
		s.ToolChoice = "auto"
		s.ParallelToolCalls = true
	}
	return s
}

// commit writes items to the store, then appends them to the transcript:
// an item is never sent before it is durable.
func (c *Conversation) commit(ctx context.Context, turnID int64, items []store.NewItem) error {
	if len(items) == 0 {
		return nil
	}
	if _, err := c.db.AppendItems(ctx, c.id, turnID, items); err != nil {
		return fmt.Errorf("commit %d item(s): %w", len(items), err)
	}
	c.mu.Lock()
	for _, it := range items {
		c.transcript = append(c.transcript, it.Data)
	}
	c.mu.Unlock()
	return nil
}

// stage queues items, and read-set updates, for the next request of the
// turn: exchange commits them with the request's row (after a staged
// response's end and output: pendingEnd), before the request is sent;
// flushPending commits what no request took.
func (c *Conversation) stage(items []store.NewItem, seen ...store.SeenWrite) {
	c.stageThen(items, seen, nil)
}

// stageThen is stage, with done called once the items are in the store
// (true) or lost (false): what the editor is told of a staged output waits
// for it, so it never hears of an output a crash could lose.
func (c *Conversation) stageThen(items []store.NewItem, seen []store.SeenWrite, done func(stored bool)) {
	c.mu.Lock()
	c.pending = append(c.pending, items...)
	c.pendingSeen = append(c.pendingSeen, seen...)
	if done != nil {
		c.pendingDone = append(c.pendingDone, done)
	}
	c.mu.Unlock()
}

// committed moves the first n staged items, now in the store, to the
// transcript, drops the first m staged read-set updates, and returns a
// function that calls what waited for them: exchange calls it once the
// request is on its way, so that telling the editor is not on the path
// between a response and the next request. Callers commit everything
// staged at once.
func (c *Conversation) committed(n, m int) (tell func()) {
	c.mu.Lock()
	for _, it := range c.pending[:n] {
		c.transcript = append(c.transcript, it.Data)
	}
	c.pending = c.pending[n:]
	c.pendingSeen = c.pendingSeen[m:]
	c.pendingEnd = nil
	done := c.pendingDone
	c.pendingDone = nil
	c.mu.Unlock()
	return func() {
		for _, f := range done {
			f(true)
		}
	}
}

// flushPending commits what is staged when no request will take it (the
// turn ended, was cancelled or failed). If that fails too the staged
// outputs are dropped, and the calls they answered are repaired before the
// next request.
func (c *Conversation) flushPending(ctx context.Context, turnID int64) error {
	c.mu.Lock()
	items, seen, end := c.pending, c.pendingSeen, c.pendingEnd
	c.mu.Unlock()
	if len(items) == 0 && len(seen) == 0 && end == nil {
		return nil
	}
	_, err := c.db.CommitStaged(ctx, c.id, turnID, store.Staged{End: end, Items: items, Seen: seen})
	if err == nil {
		c.committed(len(items), len(seen))()
		return nil
	}
	c.mu.Lock()
	c.pending, c.pendingSeen, c.pendingEnd = nil, nil, nil
	c.unanswered = true
	if end != nil {
		c.base = nil // the server holds a response the store lost
	}
	done := c.pendingDone
	c.pendingDone = nil
	c.mu.Unlock()
	for _, f := range done {
		f(false)
	}
	return fmt.Errorf("commit %d item(s): %w", len(items), err)
}

// convert brings the replay forms up to date outside the lock, so that a
// long transcript's first conversion never holds up the session's other
// users (a session/load replay reading the transcript).
func (c *Conversation) convert() {
	c.mu.Lock()
	from, todo := c.converted, c.transcript[c.converted:]
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
	c.input = replayForms(c.input, c.transcript[c.converted:])
	c.converted = len(c.transcript)
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

// outputCallID reads the call id of a function_call_output written by
// functionCallOutput without decoding its output (a third of a long
// session's items, and most of its bytes: opening it decoded them all).
func outputCallID(it json.RawMessage) (string, bool) {
	rest, ok := bytes.CutPrefix(it, []byte(`{"type":"function_call_output","call_id":"`))
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// unansweredCalls lists call ids of function calls with no output.
func unansweredCalls(items []json.RawMessage) []string {
	answered := map[string]bool{}
	var calls []string
	for _, it := range items {
		if id, ok := outputCallID(it); ok {
			answered[id] = true
			continue
		}
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

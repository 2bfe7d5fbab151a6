package session

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/hearthd/hearth/session/transcript"
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

	// cacheKey is the requests' prompt_cache_key: ID, or a fork's
	// parent's (Fork), so that the fork's requests extend the parent's
	// byte for byte and share its cached prefix.
	cacheKey string
}

// Conversation is one ACP session's agent loop: its turns, its lane on
// the workspace's Client and its baseline there; its transcript is its
// Transcript's (session/transcript). Created by Open when a session is
// created or loaded; Close cancels the warm-up and waits for it. Prompt
// calls run one at a time (the conversation's serial loop).
type Conversation struct {
	id     string
	client *Client
	log    *slog.Logger
	tr     *transcript.Transcript // what the model has seen and what is committed
	line   *line                  // its lane, baseline and request path
	box    *toolbox               // its tools

	turn chan struct{} // token held by the running Prompt: one turn at a time

	mu     sync.Mutex // guards warm and closed
	warm   *warmup
	closed bool

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the warm-up goroutine
}

// Open loads the conversation's transcript from the store. A transcript
// that ends in function calls without outputs (the daemon died mid-tool) is
// repaired with outputs saying so, so the next request is valid.
func Open(ctx context.Context, o Options) (*Conversation, error) {
	tr, err := transcript.Open(ctx, transcript.Options{DB: o.DB, ID: o.ID, Items: o.Items, Mark: storeErr})
	if err != nil {
		return nil, err
	}
	return open(ctx, o, tr)
}

// open makes the conversation of transcript tr (Open's, or a Fork's).
func open(ctx context.Context, o Options, tr *transcript.Transcript) (*Conversation, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cctx, cancel := context.WithCancel(context.Background())
	box := &toolbox{tools: o.Tools, tr: tr}
	c := &Conversation{
		id: o.ID, client: o.Client, log: log.With("session", o.ID), tr: tr, box: box,
		line: &line{id: o.ID, client: o.Client, tr: tr, box: box, log: log.With("session", o.ID), lane: o.Client.api.NewLane(), cacheKey: cmp.Or(o.cacheKey, o.ID)},
		turn: make(chan struct{}, 1), ctx: cctx, cancel: cancel,
	}
	c.line.choice.Store(&o.Choice)
	c.line.steer = &steering{queue: func(it json.RawMessage) { tr.Steering().Steer(it, nil) }, commit: tr.CommitSteeredNow, pend: tr.Steering().Pend}
	o.Client.register(c)
	if err := tr.Initialize(ctx, o.Initial); err != nil {
		c.Close()
		return nil, err
	}
	if err := tr.Repair(ctx, 0, interrupted); err != nil {
		c.Close()
		return nil, err
	}
	// Steering input a killed daemon accepted and never committed: after
	// the repaired calls, where the next request carries it once.
	if n, err := tr.Steering().Settle(ctx); err != nil {
		c.Close()
		return nil, err
	} else if n > 0 {
		c.log.Info("steering input of an interrupted turn committed", "items", n)
	}
	return c, nil
}

// interrupted answers a tool call that has no output: the daemon died
// mid-tool, or the tool's output could not be committed. The tool is never
// run again.
func interrupted(call transcript.Call) json.RawMessage {
	return callOutput(ToolCall{CallID: call.CallID, Custom: call.Custom},
		"error: interrupted — hearth stopped before this tool finished; run it again if still needed")
}

// ID returns the session id.
func (c *Conversation) ID() string { return c.id }

// Close cancels a running warm-up and waits for it. A running Prompt ends
// through its own context.
func (c *Conversation) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.client.unregister(c, c.line.laneName())
	return nil
}

package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/mcp"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
	"github.com/hearthd/hearth/workspace/watch"
)

// openWorkspace is a workspace with open sessions: its root, its tools and
// its one Responses client (one WebSocket shared by its sessions). Created
// by the first session/new or session/load for its root; closed by the
// reaper once it has had no open session for Config.WorkspaceIdle, or by
// Daemon.Close.
type openWorkspace struct {
	root     *workspace.Root
	tools    *workspace.Toolset
	specs    map[toolStyle][]json.RawMessage // tool specs per patch and shell style (workspaceSpecs), built once: byte-identical on every request
	client   *session.Client
	watcher  *watch.Watcher // nil when the workspace could not be watched
	watch    string         // why there is no watcher (status, and a notice at each session's first prompt); see watchState
	lastUsed time.Time      // guarded by Daemon.mu: opened, or its last session closed

	spare     *spareSession // guarded by Daemon.mu: a session warmed ahead of time (spare.go)
	spareBusy bool          // guarded by Daemon.mu: a spare is being made
	spareCwd  string        // guarded by Daemon.mu: where the next spare works: the last session/new's cwd ("" = the root)
}

// openSession is a session with a live Conversation and the editors
// attached to it. Created by session/new or session/load (or a prompt for a
// stored session); closed by the reaper once it has had no editor and no
// turn for Config.SessionIdle, or by Daemon.Close.
type openSession struct {
	id   string
	ws   *openWorkspace
	conv *session.Conversation
	cwd  string // the working directory it was opened in: the workspace root or below (workspace_root.go)
	dir  string // cwd relative to the workspace root; "" for the root

	since        uint64 // the watcher's journal cursor at this session's last prompt; used by the turn only
	staleChecked bool   // the read set was compared with the disk once; used by the turn only
	toldWatch    bool   // the editor was told the workspace is not watched (or not all of it); used by the turn only
	toldScope    bool   // the model was told which part of a big tree is watched; used by the turn only

	lastUsed atomic.Int64 // unix nanos of the last lookup, attach or detach: the start of its idle time

	// turnKey names the running prompt's checkpoint (undo.go): set as the
	// turn starts, read by its tool calls.
	turnKey atomic.Int64
	undone  pendingNotes // what undos and rewinds changed, for the model's next prompt (notes.go)
	turnNo  turnCount    // the numbers of its prompt turns (turn_numbers.go); used by the turn only
	// checkpointed says the running turn kept a checkpoint, so its end
	// checks the workspace's checkpoint budget (checkpoint_gc.go).
	checkpointed atomic.Bool

	// changing serializes changes of the mode, model and effort
	// (config_options.go): each is stored, applied and told before the
	// next, so every editor hears them in the order they took effect.
	changing sync.Mutex

	// steering serializes _session/steering requests to the session
	// (steering.go): each is injected, or starts its turn, before the next.
	steering sync.Mutex

	mu       sync.Mutex // guards subs, offered, cancel, turnDone, prompter, queue, closed, mode, mcp, specs, patchStyle, offer, mcpNotes
	subs     map[*clientConn]struct{}
	offered  map[*clientConn]bool // told the session's slash commands (commands.go)
	cancel   context.CancelFunc   // cancels the running turn; nil when idle
	turnDone chan struct{}        // closed when the running turn ends; nil when idle
	prompter *clientConn          // the editor that sent the running prompt: it is asked for permissions
	queue    []*queuedTurn        // prompts waiting for the running turn's end, in arrival order (turn_queue.go)
	closed   bool                 // taken out of Daemon.sessions to be closed: a prompt must look it up again
	mode     string               // read-only | ask | auto-edit | full-auto
	mcp      *mcp.Set             // the editor's MCP servers (mcp.go); nil without
	specs    []json.RawMessage    // the workspace's tool specs, then the MCP tools': what every request carries
	// patchStyle is the model's patch style specs were built for
	// (tool_specs.go).
	patchStyle string
	offer      toolOffer // what else specs offer (web_search.go)
	mcpNotes   []string  // what went wrong with the MCP servers, for the next prompt

	// shellStyle is the model's shell style specs were built for
	// (tool_specs.go); guarded by mu.
	shellStyle string
	// procs are the processes its exec_command calls left running; close
	// ends them.
	procs *workspace.Processes
	// commands keeps what its commands change (command_checkpoints.go).
	commands commandChanges
}

// workspaceFor returns the open workspace for dir, opening it on first use.
// Concurrent first uses of one root open it once; the database write and
// the watcher's directory walk happen outside the daemon-wide lock.
func (d *Daemon) workspaceFor(ctx context.Context, dir string) (*openWorkspace, error) {
	root, err := workspace.Open(dir)
	if err != nil {
		return nil, rpc.InvalidParams("cwd", "%s", cwdAdvice(dir, err))
	}
	path := root.Path()
	keep := false
	defer func() {
		if !keep {
			root.Close() // the workspace was open already, or opening it failed
		}
	}()
	if why := refusedWorkspace(path, d.Config()); why != "" {
		return nil, rpc.InvalidParams("cwd", "refusing to open %s as a workspace: %s; open a project directory instead", path, why)
	}
	var w *openWorkspace
	var cfg session.Config
	var maxDirs int
	opened, err := d.beginOpen(ctx, path, func() bool {
		if w = d.workspaces[path]; w != nil {
			w.lastUsed = time.Now()
			return true
		}
		cfg, maxDirs = d.cfg.sessionConfig(d.netDial), d.cfg.WatchMaxDirs
		return false
	})
	if err != nil || opened == nil {
		return w, err
	}
	defer opened()

	if _, err := d.db.EnsureWorkspace(ctx, path); err != nil {
		return nil, err
	}
	ts := workspace.NewToolset(root)
	w = &openWorkspace{root: root, tools: ts, lastUsed: time.Now()}
	if wt, err := watch.New(root, watch.Options{Logger: d.log.With("workspace", path), MaxDirs: maxDirs, Hub: d.watches}); err != nil {
		w.watch = "off: " + err.Error() + ". The model is not told what changes on disk"
		d.log.Warn("workspace not watched: the model will not hear of changes on disk", "root", path, "err", err)
	} else {
		w.watcher = wt
		if p := wt.Problem(); p != "" {
			d.log.Warn("file watching degraded", "root", path, "problem", p)
		}
		if partial, _ := wt.Partial(); partial {
			d.log.Warn("workspace watched in part: more directories than HEARTH_WATCH_MAX_DIRS", "root", path, "max", maxDirs)
		}
		// hearth's own writes are not reported back as the user's.
		ts.OnWrite = wt.NoteSelfWrite
		// The scan for planted repositories looks where it changed.
		workspace.UsePlantEvents(ts, wt)
	}
	w.specs = workspaceSpecs(ts)
	w.client = session.NewClient(cfg, d.log.With("workspace", path))
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		w.client.Close()
		if w.watcher != nil {
			w.watcher.Close()
		}
		return nil, errClosed // the deferred close releases the root
	}
	d.workspaces[path] = w
	d.mu.Unlock()
	keep = true // its spare is made once a session the user holds has warmed (openConversation)
	return w, nil
}

// beginOpen makes the caller the one that opens key (a workspace root, or
// "session:"+id), after any open of it in progress has ended. found runs
// under d.mu: when it reports the thing open already, beginOpen returns a
// nil opened and the caller uses what found saw. Otherwise the caller
// calls opened once its open has ended, open or failed: callers waiting
// for it look again.
func (d *Daemon) beginOpen(ctx context.Context, key string, found func() bool) (opened func(), err error) {
	for {
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return nil, errClosed
		}
		if found() {
			d.mu.Unlock()
			return nil, nil
		}
		wait := d.opening[key]
		if wait == nil {
			done := make(chan struct{})
			d.opening[key] = done
			d.mu.Unlock()
			return func() {
				d.mu.Lock()
				delete(d.opening, key)
				d.mu.Unlock()
				close(done)
			}, nil
		}
		d.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// CheckCwd returns nil when dir can be a session's working directory as far
// as a client can tell (it exists and is a directory), else the error the
// daemon would answer: hearth ask checks before it starts a daemon for a
// request that cannot succeed.
func CheckCwd(dir string) error {
	info, err := os.Stat(dir)
	if err == nil && info.IsDir() {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	return errors.New(cwdAdvice(dir, err))
}

// cwdAdvice says why dir cannot be a workspace and what to give instead,
// for the two mistakes a user makes: a path that is not there, and a file.
func cwdAdvice(dir string, err error) string {
	info, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist: create it, or give an existing project directory", dir)
	case serr == nil && !info.IsDir():
		return fmt.Sprintf("%s is a file, not a directory: give the project directory that holds it", dir)
	}
	return err.Error()
}

// sessionConfig is the model-API configuration of workspace clients under
// c, dialling with dial (nil: the network).
func (c Config) sessionConfig(dial func(ctx context.Context, network, addr string) (net.Conn, error)) session.Config {
	return session.Config{
		Config: responses.Config{
			BaseURL:           c.BaseURL,
			APIKey:            c.APIKey,
			Lanes:             c.Lanes,
			KeepaliveInterval: c.Keepalive,
			MaxConnAge:        c.MaxConnAge,
			Dial:              dial,
		},
		Model:             c.Model,
		Guidance:          true, // once per baseline, in the chain; no instructions (session/guidance.go)
		ReasoningEffort:   c.ReasoningEffort,
		ReasoningSummary:  c.ReasoningSummary,
		WarmupTimeout:     c.WarmupTimeout,
		FirstEventTimeout: c.FirstEventTimeout,
		IdleTimeout:       c.IdleTimeout,
		ContextWindow:     c.ContextWindow,
		ToolOutputTokens:  c.ToolOutputTokens,
		Compaction:        c.Compaction,
	}
}

// openConversation opens (or returns the already open) session id in w.
// Concurrent opens of one session open it once, so the repair of an
// interrupted tool call is committed once.
// The session takes servers (nil: none) when this call opens it; else they
// are stopped.
func (d *Daemon) openConversation(ctx context.Context, id string, w *openWorkspace, initial []json.RawMessage, items []store.Item, servers *mcp.Set) (*openSession, error) {
	return openConversationWith(ctx, d, id, w, servers, opening(initial, items))
}

// openConversationWith is d's openConversation with open making the
// conversation (a function: Daemon's methods are many already).
func openConversationWith(ctx context.Context, d *Daemon, id string, w *openWorkspace, servers *mcp.Set, open openConv) (*openSession, error) {
	key := "session:" + id
	var s *openSession
	opened, err := d.beginOpen(ctx, key, func() bool {
		if s = d.sessions[id]; s != nil {
			s.touch()
			return true
		}
		return false
	})
	if err != nil || opened == nil {
		servers.Close()
		return s, err
	}
	defer opened()
	s, err = newOpenSessionWith(ctx, d, id, w, servers, open)
	if err != nil {
		servers.Close()
		return nil, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		s.close()
		return nil, errClosed
	}
	d.sessions[id] = s
	s.touch()
	d.mu.Unlock()
	s.conv.Warm()
	d.spares.ensure(w, s)
	return s, nil
}

// newOpenSession opens the conversation of the stored session id in w, with
// the MCP servers of set (nil: none), not yet registered in d.sessions nor
// warmed. The caller keeps set when it fails.
func (d *Daemon) newOpenSession(ctx context.Context, id string, w *openWorkspace, initial []json.RawMessage, items []store.Item, set *mcp.Set) (*openSession, error) {
	return newOpenSessionWith(ctx, d, id, w, set, opening(initial, items))
}

// newOpenSessionWith is d's newOpenSession with open making the
// conversation.
func newOpenSessionWith(ctx context.Context, d *Daemon, id string, w *openWorkspace, set *mcp.Set, open openConv) (*openSession, error) {
	row, err := d.db.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", rpc.ErrUnknownSession, id) // deleted meanwhile
	}
	if err != nil {
		return nil, err
	}
	s := &openSession{id: id, ws: w, subs: map[*clientConn]struct{}{}, mode: row.Mode,
		patchStyle: w.client.Config().Profile.PatchStyle, shellStyle: w.client.Config().Profile.ShellStyle,
		procs: workspace.NewProcesses()}
	s.undone.db, s.undone.session = d.db, id
	s.cwd, s.dir = sessionDir(w.root.Path(), row.Cwd)
	s.setMCP(set)
	if w.watcher != nil {
		s.since = w.watcher.Cursor()
	}
	if !validMode(s.mode) {
		s.mode = ModeAsk
	}
	conv, err := open(ctx, session.Options{
		ID: id, Client: w.client, DB: d.db, Tools: &sessionTools{d: d, s: s},
		Log: d.log, Choice: session.Choice{Model: row.ChosenModel, Effort: row.ChosenEffort},
	})
	if err != nil {
		return nil, err
	}
	s.conv = conv
	return s, nil
}

// lookup returns an open session, opening a stored one on demand (a
// prompt after a daemon restart needs no session/load first).
func (d *Daemon) lookup(ctx context.Context, id string) (*openSession, error) {
	d.mu.Lock()
	s := d.sessions[id]
	if s != nil {
		s.touch() // under d.mu: the reaper cannot take it between here and its use
	}
	d.mu.Unlock()
	if s != nil {
		return s, nil
	}
	row, err := storedSession(ctx, d.db, id)
	if err != nil {
		return nil, err
	}
	w, err := d.workspaceFor(ctx, row.Root)
	if err != nil {
		return nil, err
	}
	return d.openConversation(ctx, id, w, nil, nil, nil)
}

// storedSession reads session id's row from db: a session the store does
// not hold is an unknown session (-32002); a store that fails to answer is
// not.
func storedSession(ctx context.Context, db *store.DB, id string) (store.Session, error) {
	row, err := db.Session(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return row, fmt.Errorf("%w: %s", rpc.ErrUnknownSession, id)
	case err != nil:
		return row, fmt.Errorf("read session %s: %w", id, err)
	}
	return row, nil
}

// attach subscribes c to s's updates.
func (s *openSession) attach(c *clientConn) {
	s.mu.Lock()
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	s.touch()
}

// detach removes c from every session it was attached to.
func (d *Daemon) detach(c *clientConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		close(d.left)
		d.left = make(chan struct{})
	}()
	for _, s := range d.sessions {
		s.mu.Lock()
		if _, ok := s.subs[c]; ok {
			delete(s.subs, c)
			delete(s.offered, c)
			s.touch()
		}
		s.mu.Unlock()
	}
}

// broadcast sends a session/update to every attached client but skip.
func (s *openSession) broadcast(u acp.SessionUpdate, skip *clientConn) {
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id), Update: u})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		if c != skip {
			c.out.notify(rpc.MethodSessionUpdate, b)
		}
	}
}

// broadcastText sends an agent message chunk (or, thought, an agent
// thought chunk) to every attached client; chunks merge in a client's
// outbox while it is behind.
func (s *openSession) broadcastText(text string, thought bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		c.out.notifyText(s.id, text, thought)
	}
}

// sessionTools is the session.Tools of one session: the workspace's tools
// behind the session's mode and the user's permission, recording what the
// model saw of each file.
type sessionTools struct {
	d *Daemon
	s *openSession
}

// Concurrent says which calls may run side by side: those that only read
// and never ask the user — a read-only tool's, a command that only reads
// (workspace.ReadOnlyCall; decideCommand runs it read-only and unasked, or
// refuses it in read-only mode).
func (t *sessionTools) Concurrent(call session.ToolCall) bool {
	if tool, _, ok := t.s.mcpTool(call.Name); ok {
		return tool.ReadOnly
	}
	return workspace.ReadOnlyCall(call.Name, json.RawMessage(call.Arguments))
}

// Run runs a call and keeps its output within the session's tool-output
// budget (session.ClipOutput, Config.ToolOutputBudget): one rule for what
// every tool's and MCP server's output may take in the model's view. The
// tools' own caps (read_file's, the shell's) only bound the memory a call
// takes.
func (t *sessionTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	res := t.run(ctx, call)
	res.Output = session.ClipOutput(res.Output, t.s.conv.Config().ToolOutputBudget()) // the session's model's
	return res
}

func (t *sessionTools) run(ctx context.Context, call session.ToolCall) session.ToolResult {
	if st, ok := lookupSessionLevelTool(call.Name); ok {
		return st.run(t.s, call) // session_level_tools.go
	}
	if tool, set, ok := t.s.mcpTool(call.Name); ok {
		return t.runMCP(ctx, call, tool, set)
	}
	ws := t.s.ws
	tools := ws.tools.In(t.s.dir) // the model's paths start at the session's working directory
	args := json.RawMessage(call.Arguments)
	tool, known := ws.tools.Lookup(call.Name)
	// Files go through the prompting editor's buffers when it offers them
	// (editor_files.go); confinement stays the tools' own.
	ed := t.s.toolEditor()
	var grant CommandGrant
	if known && !tool.ReadOnly {
		pv, err := tools.PreviewVia(ctx, ed, call.Name, args)
		if err != nil {
			// An invalid call is answered without bothering the user.
			return session.ToolResult{Output: err.Error(), IsError: true, Kind: tool.Kind}
		}
		if as, ok := ws.tools.Lookup(pv.As); ok {
			tool = as // a shell command that is an apply_patch: asked about, and run, as one
		}
		// Every attached editor shows what the call will do (the diff, the
		// command) before anyone is asked about it.
		t.s.broadcast(previewUpdate(t.s, call, tool, pv), nil)
		var res *session.ToolResult
		var ok bool
		if tool.Kind == "execute" && pv.Command != "" {
			grant, res, ok = t.authorizeCommand(ctx, call, tool, pv, t.commandRequest(pv)) // approval_rules.go
		} else {
			res, ok = t.authorize(ctx, call, tool, pv)
		}
		if !ok {
			res.Kind, res.Title, res.Locations = tool.Kind, pv.Title, pv.Locations
			return *res
		}
	}
	// The shell's network follows the mode as it is now (the user may
	// have switched while being asked), unless the user let the command out.
	t.s.mu.Lock()
	mode := t.s.mode
	t.s.mu.Unlock()
	start := time.Now()
	tools = tools.WithNetwork(grant.Network(t.d.cfg.ShellNetwork, mode)).WithAccess(grant.Access)
	t.s.turnKey.CompareAndSwap(0, time.Now().UnixNano()) // a call outside a prompt's turn (none today) still gets a checkpoint
	rec := turnRecorder{db: t.d.db, objects: checkpointObjects(t.d.cfg.DataDir), session: t.s.id, turn: t.s.turnKey.Load(),
		keeper: t.d.ckpt, recorded: &t.s.checkpointed}
	tools.Checkpoint = rec.before // checkpoints.go: each file's pre-image kept before it changes (tools is this call's copy)

	tools.Commands = t.s.commands.bind(t.d, t.s) // command_checkpoints.go: what its commands change
	r := tools.WithLive(t.liveOutput(call)).WithProcesses(t.s.procs).RunVia(ctx, ed, call.Name, args)
	if ws.watcher != nil {
		ws.watcher.Touch(start, r.Locations...) // a tree too big to watch whole is watched where the tools go
	}
	out := session.ToolResult{Output: r.Output, IsError: r.IsError, Title: r.Title, Kind: tool.Kind, Locations: r.Locations}
	if r.Diff != nil {
		out.Diff = &session.Diff{Path: r.Diff.Path, Old: r.Diff.Old, New: r.Diff.New}
	}
	if r.Image != nil {
		out.Images = []session.Image{{MIME: r.Image.MIME, Data: r.Image.Data}}
	}
	if !r.IsError && r.Hash != "" && len(r.Locations) == 1 {
		out.Seen = t.seen(r.Locations[0], r)
	}
	if len(r.Files) > 0 {
		t.patchResult(ctx, &out, r.Files) // patch_result.go
	}
	return out
}

// maxSeenContent bounds the copy of a file kept to diff against later: what
// read_file keeps of what it read (a larger file is hashed, not kept).
const maxSeenContent = watch.MaxContent

// seen is what the model now knows of rel: the content it read or wrote,
// so the next context delta shows only what changed since. The session
// commits it with the tool's output. Text read from or written to the
// editor's buffer is recorded as such: when the user saves it, the disk
// matches the read set and the delta stays quiet. Only what the tool kept
// is recorded: the file is never read again here (a binary file, or text
// over maxSeenContent, is known by its hash alone).
func (t *sessionTools) seen(rel string, r workspace.Result) *store.SeenWrite {
	seen := store.Seen{Hash: r.Hash}
	switch {
	case r.Image != nil:
		// An image is never diffed: the delta names it when it changes.
	case r.Diff != nil:
		seen.Content = keptContent(r.Diff.New)
	case r.Content != "":
		seen.Content = keptContent(r.Content)
	case r.Hash == emptyHash:
		seen.Content = []byte{} // an empty file: diffed from nothing
	}
	return &store.SeenWrite{Path: rel, Seen: seen}
}

// keptContent is text as the read set keeps it: nil when over
// maxSeenContent.
func keptContent(s string) []byte {
	if len(s) > maxSeenContent {
		return nil
	}
	return []byte(s)
}

// emptyHash is the hash read_file gives an empty file.
var emptyHash = hashOf(nil)

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// loadPage is how many stored items session/load reads at a time.
const loadPage = 500

// loadStreaming is session/load's lookup. It reads the session's items
// from the store a page at a time and hands each page to each as soon as it
// is read (the editor sees the first updates at once, whatever the
// session's length); a session not open yet is then opened with the items
// read, so each item is read once. The store has what the live view showed
// (tool views), which an open conversation's transcript does not.
//
// The session gets servers: a session not open yet starts them before it
// opens; an open one changes to them if they differ (refreshMCP).
func (d *Daemon) loadStreaming(ctx context.Context, id string, servers []mcp.Server, each func(*openWorkspace, []store.Item) error) (*openSession, error) {
	d.mu.Lock()
	s := d.sessions[id]
	if s != nil {
		s.touch()
	}
	d.mu.Unlock()
	var w *openWorkspace
	var cwd string // the session's working directory: where its MCP servers start
	if s != nil {
		w = s.ws
	} else {
		row, err := storedSession(ctx, d.db, id)
		if err != nil {
			return nil, err
		}
		if w, err = d.workspaceFor(ctx, row.Root); err != nil {
			return nil, err
		}
		cwd = row.Cwd
	}
	var items []store.Item // kept only to open the session
	for after := int64(0); ; {
		page, err := d.db.Items().Page(ctx, id, after, loadPage)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		if err := each(w, page); err != nil {
			return nil, err
		}
		if s == nil {
			items = append(items, page...)
		}
		after = page[len(page)-1].Seq
		if len(page) < loadPage {
			break
		}
	}
	if s != nil {
		s.refreshMCP(d.ctx, d.Config(), d.log, servers)
		return s, nil
	}
	if items == nil {
		items = []store.Item{}
	}
	s, err := d.openConversation(ctx, id, w, nil, items, startMCP(d.ctx, d.Config(), d.log, w, cwd, servers))
	if err != nil {
		return nil, err
	}
	// Opening may commit what a killed daemon left pending (steering
	// input): the replay shows it too, after the rest.
	for after := lastSeq(items); ; {
		page, err := d.db.Items().Page(ctx, id, after, loadPage)
		if err != nil || len(page) == 0 {
			return s, err
		}
		if err := each(w, page); err != nil {
			return nil, err
		}
		after = page[len(page)-1].Seq
	}
}

// lastSeq is the seq of the last of items, 0 when there are none.
func lastSeq(items []store.Item) int64 {
	if len(items) == 0 {
		return 0
	}
	return items[len(items)-1].Seq
}

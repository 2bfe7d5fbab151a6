package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// rewindCommand reads /rewind and /rewind N: n is 0 for the list; ok is
// false for any other text.
func rewindCommand(text string) (n int, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), "/rewind")
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 0, true
	}
	if r, _ := utf8.DecodeRuneInString(rest); !unicode.IsSpace(r) {
		return 0, false // another command: /rewinder
	}
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	return n, err == nil && n > 0
}

// rewinder takes a session back to before one of its prompt turns: its
// files (every later turn's checkpoint put back, the newest first) and
// its model's view (session.Conversation.Rewind); or lists the turns.
// Made for one /rewind or _hearth/rewind, run as a turn of the session;
// a list of _hearth/rewind's claims no turn and needs only db.
type rewinder struct {
	db      *store.DB
	objects objectStore
	s       *openSession
	ed      workspace.Editor
}

// run lists the turns (n 0) or rewinds to before turn n.
func (r rewinder) run(ctx context.Context, n int) (rpc.RewindResult, error) {
	res := rpc.RewindResult{SessionID: r.s.id}
	turns, err := r.db.Branches().PromptTurns(ctx, r.s.id)
	if err != nil {
		return res, err
	}
	switch {
	case n == 0:
		return r.list(ctx, res, turns)
	case n > len(turns):
		res.Message = fmt.Sprintf("There is no turn %d to rewind to: this session has %d (/rewind lists them).", n, len(turns))
		return res, nil
	}
	t := turns[n-1]
	switch err := r.s.conv.Rewind(ctx, t.ID); {
	case errors.Is(err, session.ErrCompacted):
		res.Message = fmt.Sprintf("Turn %d was compacted: the model's view of it is a summary now, and cannot be taken back there.", n)
		return res, nil
	case err != nil:
		return res, err
	}
	changed, err := r.db.Checkpoints().ChangedSince(ctx, r.s.id, keyOf(t.PrevStarted))
	if err != nil {
		return res, err
	}
	var p putBack
	for _, tf := range changed {
		p.turn(ctx, r.objects, r.s, r.ed, tf.Files)
		if err := r.db.Checkpoints().MarkUndone(context.WithoutCancel(ctx), r.s.id, tf.Turn); err != nil {
			return res, err
		}
	}
	res.Rewound = true
	res.Restored, res.Removed, res.Conflicts, res.Failed = p.Restored, p.Removed, p.Conflicts, p.Failed
	res.ConflictDiffs, res.NotRestorable = p.Diffs, p.NotRestorable
	res.Message = rewindMessage(n, len(turns), p) + droppedLine(ctx, r.db, r.s.id, keyOf(t.PrevStarted)) + diffsText(p.Diffs)
	if note := rewindNote(p); note != "" {
		r.s.undone.add(note)
	}
	return res, nil
}

// keyOf is the checkpoint key of a moment (openSession.turnKey: the
// checkpoint of a prompt turn is keyed after the turn before it started
// and before its own starts): 0 for none.
func keyOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// list fills res with the session's prompt turns and says them.
func (r rewinder) list(ctx context.Context, res rpc.RewindResult, turns []store.PromptTurn) (rpc.RewindResult, error) {
	rewinds, err := r.db.Branches().Rewinds(ctx, res.SessionID)
	if err != nil {
		return res, err
	}
	if len(turns) == 0 {
		res.Message = "This session has no turn to rewind to yet."
		return res, nil
	}
	var b strings.Builder
	b.WriteString("The turns of this session (/rewind N takes the files and the conversation back to before turn N):")
	for _, t := range turns {
		files, err := r.db.Checkpoints().FilesBetween(ctx, res.SessionID, keyOf(t.PrevStarted), keyOf(t.Started))
		if err != nil {
			return res, err
		}
		paths, err := r.db.Checkpoints().PathsBetween(ctx, res.SessionID, keyOf(t.PrevStarted), keyOf(t.Started), rpc.MaxRewindPaths)
		if err != nil {
			return res, err
		}
		rt := rpc.RewindTurn{Turn: t.N, Prompt: promptLine(t.Messages), Files: files, Rewound: inRewind(t.FirstSeq, rewinds), Paths: paths}
		res.Turns = append(res.Turns, rt)
		fmt.Fprintf(&b, "\n%d. %s", rt.Turn, rt.Prompt)
		if rt.Files > 0 {
			fmt.Fprintf(&b, " (%d files changed)", rt.Files)
		}
		if rt.Rewound {
			b.WriteString(" (rewound)")
		}
	}
	res.Message = b.String()
	return res, nil
}

// promptLine is the first line of a turn's prompt, at most 80 characters:
// its first user message that is not hearth's framing.
func promptLine(messages []json.RawMessage) string {
	for _, m := range messages {
		r, ok := scanReplayItem(m)
		if !ok && json.Unmarshal(m, &r) != nil {
			continue
		}
		text := messageText(r.Content)
		if r.Role != "user" || hearthContext(text) {
			continue // hearth's framing: the permissions, the environment, a note
		}
		line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		if utf8.RuneCountInString(line) > 80 {
			line = string([]rune(line)[:79]) + "…"
		}
		return line
	}
	return ""
}

func inRewind(seq int64, rewinds []store.Rewind) bool {
	for _, w := range rewinds {
		if seq >= w.FromSeq && seq <= w.ThroughSeq {
			return true
		}
	}
	return false
}

// rewindMessage says what a rewind did, for the user.
func rewindMessage(n, of int, p putBack) string {
	var b strings.Builder
	turns := fmt.Sprintf("turns %d to %d (they stay", n, of)
	if n == of {
		turns = fmt.Sprintf("turn %d (it stays", n)
	}
	fmt.Fprintf(&b, "Rewound this session to before turn %d: the model's view no longer holds %s in the history, shown as rewound), "+
		"and the files changed since by its tools and commands are put back.", n, turns)
	list := func(what string, paths []string) {
		if len(paths) > 0 {
			fmt.Fprintf(&b, " %s: %s.", what, strings.Join(paths, ", "))
		}
	}
	list("Restored", p.Restored)
	list("Removed (created by those turns)", p.Removed)
	list("Left as they are, changed since (conflicts)", p.Conflicts)
	list("Could not be restored", p.Failed)
	list("Not restorable (their content before was not kept)", p.NotRestorable)
	return b.String()
}

// rewindNote tells the model of the files a rewind could not put back:
// they do not hold what its view of the conversation says ("" for none).
func rewindNote(p putBack) string {
	if len(p.Conflicts) == 0 && len(p.Failed) == 0 && len(p.NotRestorable) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("The user rewound the conversation to this point (/rewind) and the files were put back as they were here, except these, which may differ from what you remember: read them again before relying on them.")
	if len(p.Conflicts) > 0 {
		fmt.Fprintf(&b, "\nChanged by someone else since (left as they are): %s", strings.Join(p.Conflicts, ", "))
	}
	if len(p.Failed) > 0 {
		fmt.Fprintf(&b, "\nCould not be restored: %s", strings.Join(p.Failed, ", "))
	}
	if len(p.NotRestorable) > 0 {
		fmt.Fprintf(&b, "\nLeft as they are (their content before was not kept): %s", strings.Join(p.NotRestorable, ", "))
	}
	return b.String()
}

// rewind runs /rewind as the claimed turn t, and tells the editors.
func (t *promptTurn) rewind(n int) session.StopReason {
	res, err := rewinder{db: t.db, objects: checkpointObjects(t.cfg.DataDir), s: t.s, ed: t.s.toolEditor()}.run(t.tctx, n)
	if err != nil {
		t.log.Warn("rewind failed", "session", t.s.id, "err", err)
		res.Message = "The rewind failed: " + err.Error()
	}
	updates{t.s}.Reply(res.Message) // an answer to the command: an agent message for every editor
	return session.StopEndTurn
}

// hearthRewind is _hearth/rewind: /rewind for the editors and the CLI,
// run as a turn of the session (after the running one, if any); its
// attached editors are told.
func hearthRewind(c *clientConn, ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.RewindParams
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Turn < 0 {
		return nil, fmt.Errorf("%w: turn %d", rpc.ErrInvalidParams, p.Turn)
	}
	row, err := sessionByIDOrPrefix(ctx, c.d.db, p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.Turn == 0 { // a list reads the store only: it answers while a turn runs, and opens nothing
		turns, err := c.d.db.Branches().PromptTurns(ctx, row.ID)
		if err != nil {
			return nil, err
		}
		return rewinder{db: c.d.db}.list(ctx, rpc.RewindResult{SessionID: row.ID}, turns)
	}
	return asSessionTurn(c, ctx, row.ID, "rewind", func(tctx context.Context, s *openSession) (rpc.RewindResult, string, error) {
		res, err := rewinder{db: c.d.db, objects: checkpointObjects(c.d.Config().DataDir), s: s, ed: s.toolEditor()}.run(tctx, p.Turn)
		return res, res.Message, err
	})
}

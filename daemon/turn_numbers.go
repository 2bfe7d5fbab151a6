package daemon

import (
	"context"
	"encoding/json"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// The editors name a session's prompt turns by the numbers hearth gives
// them (store.PromptTurn.N: from 1, rewound ones included, slash commands
// hearth runs itself not counted): a session/prompt's answer carries its
// turn's, and session/load's replay carries each user message's, under
// these _meta keys. /rewind N takes the same numbers.
const (
	metaTurn    = "hearth/turn"
	metaRewound = "hearth/rewound"
)

// turnCount numbers a session's prompt turns as they run: it counts them
// in the store once, then only the turns after the last it counted. Lives
// as long as its openSession; used by the turn only.
type turnCount struct {
	known bool
	n     int   // the prompt turns counted
	last  int64 // the last one's id
}

// prime counts the session's prompt turns, the first time only: before a
// prompt runs, so that advance can tell whether it ran one.
func (tc *turnCount) prime(ctx context.Context, db *store.DB, sessionID string) {
	if tc.known {
		return
	}
	n, last, err := db.Branches().PromptTurnsAfter(ctx, sessionID, 0)
	if err == nil {
		tc.known, tc.n, tc.last = true, n, last
	}
}

// advance returns the number of the prompt turn that just ran, and false
// when none did (the prompt was cancelled before its turn began) or the
// count is unknown.
func (tc *turnCount) advance(ctx context.Context, db *store.DB, sessionID string) (int, bool) {
	if !tc.known {
		return 0, false
	}
	n, last, err := db.Branches().PromptTurnsAfter(ctx, sessionID, tc.last)
	if err != nil || n == 0 {
		return 0, false
	}
	tc.n, tc.last = tc.n+n, last
	return tc.n, true
}

// replayTurns numbers the prompt turns of a replay as session/load shows
// them, page after page, by store.PromptTurns' rule: a turn is counted at
// its first user message the model saw. Made per session/load; used by
// its replay only.
type replayTurns struct {
	rewinds []store.Rewind
	n       int
	last    int64 // the turn counted last
}

// meta is the _meta of the user_message_chunks that show it, nil for an
// item that is not a prompt turn's user message. A turn is counted at its
// first input message the model saw (store.PromptTurns' rule).
func (rt *replayTurns) meta(it store.Item, role string) map[string]any {
	if rt == nil || it.TurnID == 0 || it.Type != "message" || it.Origin != store.OriginInput {
		return nil
	}
	if _, shown := session.Shown(it.View); shown {
		return nil
	}
	if it.TurnID != rt.last {
		rt.n, rt.last = rt.n+1, it.TurnID
	}
	if role != "user" {
		return nil
	}
	m := map[string]any{metaTurn: rt.n}
	if inRewind(it.Seq, rt.rewinds) {
		m[metaRewound] = true
	}
	return m
}

// withUpdateMeta adds meta to a session/update notification's update
// object, which its encoding ends with (textNotification, the SDK's
// SessionNotification).
func withUpdateMeta(b []byte, meta []byte) []byte {
	if len(b) < 3 || string(b[len(b)-2:]) != "}}" || len(meta) == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+len(meta)+12)
	out = append(out, b[:len(b)-2]...)
	out = append(out, `,"_meta":`...)
	out = append(out, meta...)
	return append(out, "}}"...)
}

// turnMeta is the encoded _meta of the user_message_chunks that show it,
// nil when they carry none.
func (r replayer) turnMeta(it store.Item) []byte {
	if r.turns == nil || it.Type != "message" || it.Origin != store.OriginInput || it.TurnID == 0 {
		return nil
	}
	ri, ok := scanReplayItem(it.Data)
	if !ok && json.Unmarshal(it.Data, &ri) != nil {
		return nil
	}
	m := r.turns.meta(it, ri.Role)
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

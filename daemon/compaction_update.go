package daemon

import (
	"context"
	"encoding/json"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// Compactions (ACP 1.34's compaction_update and compaction_summary_chunk)
// show to a client that advertised session.compaction as they run, and
// again in session/load's replay; the other clients get the notice in the
// answer once one is done, as before 1.34. The Go SDK (v0.13.5) has no
// type for them: they are encoded here.

// metaCompactionNote is the _meta key of a completed compaction_update
// carrying hearth's notice of it (what the other clients are told).
const metaCompactionNote = "hearth/note"

// Compaction shows a compaction's start or end to every attached client,
// each as it advertised (clientCaps).
func (u updates) Compaction(cp session.Compaction) {
	rich := compactionNotifications(u.s.id, cp)
	var plain []json.RawMessage
	if cp.Status == session.CompactionCompleted && cp.Note != "" {
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(u.s.id), Update: noticeUpdate(cp.Note)})
		if err == nil {
			plain = []json.RawMessage{b}
		}
	}
	u.s.broadcastEach(func(c *clientConn) []json.RawMessage {
		if c.caps.compaction.Load() {
			return rich
		}
		return plain
	})
}

type (
	// compactionUpdateWire is ACP's CompactionUpdate session update.
	compactionUpdateWire struct {
		SessionUpdate string                   `json:"sessionUpdate"`
		CompactionID  string                   `json:"compactionId"`
		Status        session.CompactionStatus `json:"status"`
		Error         string                   `json:"error,omitempty"`
		Meta          map[string]any           `json:"_meta,omitempty"`
	}
	// compactionChunkWire is ACP's CompactionSummaryChunk session update.
	compactionChunkWire struct {
		SessionUpdate string      `json:"sessionUpdate"`
		CompactionID  string      `json:"compactionId"`
		Content       textContent `json:"content"`
	}
)

// compactionNotifications are the session/updates that show cp: its
// status, after its summary (a chunk) when it completed with one. The
// replay shows a stored compaction with the same updates.
func compactionNotifications(sessionID string, cp session.Compaction) []json.RawMessage {
	var out []json.RawMessage
	if cp.Status == session.CompactionCompleted && cp.Summary != "" {
		b, _ := json.Marshal(wireNotification[compactionChunkWire]{SessionID: sessionID, Update: compactionChunkWire{
			SessionUpdate: "compaction_summary_chunk", CompactionID: cp.ID, Content: textContent{Text: cp.Summary, Type: "text"}}})
		out = append(out, b)
	}
	up := compactionUpdateWire{SessionUpdate: "compaction_update", CompactionID: cp.ID, Status: cp.Status, Error: cp.Error}
	if cp.Note != "" {
		up.Meta = map[string]any{metaCompactionNote: cp.Note}
	}
	b, _ := json.Marshal(wireNotification[compactionUpdateWire]{SessionID: sessionID, Update: up})
	return append(out, b)
}

// replayedCompaction is what session/load shows a client that advertised
// session.compaction of a stored compaction notice: the compaction, as it
// ended live. False for items that are none (shown as before).
func replayedCompaction(sessionID string, it store.Item) ([]json.RawMessage, bool) {
	id, summary, ok := session.ShownCompaction(it.View)
	if !ok {
		return nil, false
	}
	r, ok := scanReplayItem(it.Data)
	if !ok {
		return nil, false
	}
	return compactionNotifications(sessionID, session.Compaction{ID: id, Status: session.CompactionCompleted,
		Summary: summary, Note: messageText(r.Content)}), true
}

// replayCompaction queues the updates that show a stored compaction
// notice to a client that advertised session.compaction; false when it
// is not one (or the client did not), for the replay to show it as
// before.
func (r replayer) replayCompaction(ctx context.Context, out *outbox, it store.Item) (bool, error) {
	if !r.compaction {
		return false, nil
	}
	bs, ok := replayedCompaction(r.session, it)
	if !ok {
		return false, nil
	}
	for _, b := range bs {
		if err := out.enqueueWithin(ctx, notification{method: rpc.MethodSessionUpdate, params: b}, out.replayBudget()); err != nil {
			return true, err
		}
	}
	return true, nil
}

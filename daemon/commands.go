package daemon

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// The session's slash commands, offered to editors with
// available_commands_update after session/new and session/load. A prompt
// that is exactly one of them runs it instead of going to the model.
var sessionCommands = []acp.AvailableCommand{{
	Name: "compact",
	Description: "Replace the older part of this session, in the model's view, by a summary the model writes " +
		"(the whole history stays in hearth inspect). hearth does it by itself near the context window.",
}}

func isCompactCommand(text string) bool { return strings.TrimSpace(text) == "/compact" }

// offerAfterReply offers session id's slash commands to the editors
// attached to it (c among them) once the answer to the call handled with
// ctx — session/new, session/load, session/resume: the handler's own
// context — is written: an editor learns a new session's id from that
// answer, and an update naming it before would be dropped. again offers
// them to c even if it was told before (session/load and resume: the
// editor rebuilds its view of the session).
func (c *clientConn) offerAfterReply(ctx context.Context, id string, again bool) {
	offer := func() {
		c.d.mu.Lock()
		s := c.d.sessions[id]
		c.d.mu.Unlock()
		if s == nil {
			return
		}
		if again {
			s.mu.Lock()
			delete(s.offered, c)
			s.mu.Unlock()
		}
		s.offerCommands()
	}
	if !rpc.AfterReply(c.stream, ctx, offer) {
		offer()
	}
}

// offerCommands tells each attached editor not told yet which slash
// commands s has. It is called where an editor knows the session's id for
// sure — after the answer to session/new, load or resume, and at the start
// of a prompt (an editor that prompts a session it never opened here).
func (s *openSession) offerCommands() {
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id),
		Update: acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: sessionCommands}}})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		if !s.offered[c] {
			if s.offered == nil {
				s.offered = map[*clientConn]bool{}
			}
			s.offered[c] = true
			c.notify(rpc.MethodSessionUpdate, b)
		}
	}
}

// compact is _hearth/compact: the session compacts now, as a turn of its
// own (after the running one, if any); its attached editors are told.
func (c *clientConn) compact(ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.CompactParams
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	row, err := sessionByIDOrPrefix(ctx, c.d.db, p.SessionID)
	if err != nil {
		return nil, err
	}
	s, err := c.d.lookup(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	stop, err := s.conv.Compact(ctx, updates{s})
	if err != nil {
		return nil, turnError(err)
	}
	res := rpc.CompactResult{SessionID: s.id, StopReason: string(stop)}
	if last, err := c.d.db.LastCompaction(ctx, s.id); err == nil {
		res.Compaction = &rpc.CompactionInfo{ThroughSeq: last.ThroughSeq, Reason: last.Reason, Summary: last.Summary,
			ResponseID: last.ResponseID, Created: last.Created}
	}
	return res, nil
}

package daemon

import (
	"encoding/json"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// Notices (ACP 1.34's notice session update) are live only: what a user
// should know and no model should see (a fallback to HTTP, a retry). A
// client that advertised session.notices gets them as notices; the others
// get them in the answer (noticeUpdate), as before 1.34. The Go SDK
// (v0.13.5) has no type for them: they are encoded here.

// NoticeWith shows a notice of severity to every attached client, each as
// it advertised (clientCaps).
func (u updates) NoticeWith(severity session.NoticeSeverity, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	plain, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(u.s.id), Update: noticeUpdate(text)})
	if err != nil {
		return
	}
	rich := noticeNotification(u.s.id, severity, text)
	u.s.broadcastEach(func(c *clientConn) []json.RawMessage {
		if c.caps.notices.Load() {
			return []json.RawMessage{rich}
		}
		return []json.RawMessage{plain}
	})
}

// Reply shows hearth's own answer to a command it ran instead of the
// model (/undo) in the answer, to every client: the user asked for it, so
// it is the turn's answer, not a notice on the side.
func (u updates) Reply(text string) {
	u.s.broadcast(noticeUpdate(text), nil)
}

// noticeWire is ACP's Notice session update.
type noticeWire struct {
	SessionUpdate string                 `json:"sessionUpdate"`
	Severity      session.NoticeSeverity `json:"severity"`
	Title         string                 `json:"title"`
	Description   string                 `json:"description,omitempty"`
	Meta          map[string]any         `json:"_meta,omitempty"`
}

// noticeNotification is the session/update carrying a notice: its first
// line the title, the rest the description, marked rpc.MetaNotice as the
// answer's notices are.
func noticeNotification(sessionID string, severity session.NoticeSeverity, text string) json.RawMessage {
	title, desc, _ := strings.Cut(strings.TrimSpace(text), "\n")
	b, _ := json.Marshal(wireNotification[noticeWire]{SessionID: sessionID, Update: noticeWire{
		SessionUpdate: "notice", Severity: severity, Title: strings.TrimSpace(title), Description: strings.TrimSpace(desc),
		Meta: map[string]any{rpc.MetaNotice: true}}})
	return b
}

// broadcastEach sends every attached client the session/updates build
// makes for it, in order.
func (s *openSession) broadcastEach(build func(c *clientConn) []json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		for _, b := range build(c) {
			c.out.notify(rpc.MethodSessionUpdate, b)
		}
	}
}

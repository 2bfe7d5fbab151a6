package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// A session's prompt turns are its turns that ran a user's prompt: those
// with a user's message hearth sent as input that the model saw (a command
// hearth ran itself, /compact, is kept for the editor only and is not
// one). They are numbered from 1 in the order they ran, rewound ones
// included: /rewind N and the editors' "hearth/turn" name them so.

// promptMessages selects the user messages of a session's turns that the
// model saw: ?1 is the session.
const promptMessages = `FROM items WHERE session_id = ?1 AND turn_id IS NOT NULL AND type = 'message'
	AND origin = 'input' AND json_extract(data, '$.role') = 'user'
	AND (view IS NULL OR substr(view, 1, 9) <> '{"shown":')`

// PromptTurn is one prompt turn of a session: a snapshot.
type PromptTurn struct {
	N           int   // 1-based, in the order the turns ran
	ID          int64 // the turn's row
	FirstSeq    int64 // its first item's seq
	Started     time.Time
	PrevStarted time.Time         // when the session's turn before it (of any kind) started; zero for the first
	Messages    []json.RawMessage // its user messages, in order (the prompt, and any framing hearth sent as one)
}

// PromptTurns returns the session's prompt turns, in order.
func (b Branches) PromptTurns(ctx context.Context, sessionID string) ([]PromptTurn, error) {
	var out []PromptTurn
	err := b.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT m.turn_id, m.data,
			(SELECT min(seq) FROM items WHERE session_id = ?1 AND turn_id = m.turn_id),
			t.started, coalesce((SELECT max(p.started) FROM turns p WHERE p.session_id = ?1 AND p.seq < t.seq), 0)
			FROM (SELECT turn_id, seq, data `+promptMessages+`) m JOIN turns t ON t.id = m.turn_id
			ORDER BY t.seq, m.seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p PromptTurn
			var data string
			var started, prev int64
			if err := rows.Scan(&p.ID, &data, &p.FirstSeq, &started, &prev); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].ID != p.ID {
				p.N, p.Started = len(out)+1, fromNanos(started)
				if prev != 0 {
					p.PrevStarted = fromNanos(prev)
				}
				out = append(out, p)
			}
			last := &out[len(out)-1]
			last.Messages = append(last.Messages, json.RawMessage(data))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: prompt turns of session %s: %w", sessionID, err)
	}
	return out, nil
}

// PromptTurnsAfter counts the session's prompt turns after turn afterID
// (0: all of them) and returns the last one's id (afterID when none).
func (b Branches) PromptTurnsAfter(ctx context.Context, sessionID string, afterID int64) (n int, last int64, err error) {
	err = b.db.read(func(r *sql.DB) error {
		var l sql.NullInt64
		if err := r.QueryRowContext(ctx, `SELECT count(DISTINCT turn_id), max(turn_id) `+promptMessages+` AND turn_id > ?2`,
			sessionID, afterID).Scan(&n, &l); err != nil {
			return err
		}
		last = afterID
		if l.Valid {
			last = l.Int64
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: count the prompt turns of session %s: %w", sessionID, err)
	}
	return n, last, nil
}

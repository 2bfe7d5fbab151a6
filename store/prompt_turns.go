package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// A session's prompt turns are its turns that ran a user's prompt: those
// with a message hearth sent as input that the model saw (a command hearth
// ran itself, /compact, is kept for the editor only and is not one). They
// are numbered from 1 in the order they ran, rewound ones included:
// /rewind N and the editors' "hearth/turn" name them so.

// promptInput is the condition on an item i that makes its turn a prompt
// turn. Only the small fields before data are read: EXISTS stops at a
// turn's first input, ahead of its answer (which can be megabytes).
const promptInput = `i.origin = 'input' AND i.type = 'message' AND (i.view IS NULL OR substr(i.view, 1, 9) <> '{"shown":')`

// promptTurnsWhere selects a session's prompt turns t: ?1 is the session.
const promptTurnsWhere = `t.session_id = ?1 AND EXISTS (SELECT 1 FROM items i WHERE i.turn_id = t.id AND ` + promptInput + `)`

// PromptTurn is one prompt turn of a session: a snapshot.
type PromptTurn struct {
	N           int   // 1-based, in the order the turns ran
	ID          int64 // the turn's row
	FirstSeq    int64 // its first item's seq
	Started     time.Time
	PrevStarted time.Time         // when the session's turn before it (of any kind) started; zero for the first
	Messages    []json.RawMessage // its input messages, in order (the prompt among hearth's framing)
}

// PromptTurns returns the session's prompt turns, in order.
func (b Branches) PromptTurns(ctx context.Context, sessionID string) ([]PromptTurn, error) {
	var out []PromptTurn
	err := b.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT t.id, t.started,
			coalesce((SELECT max(p.started) FROM turns p WHERE p.session_id = ?1 AND p.seq < t.seq), 0),
			(SELECT min(seq) FROM items WHERE turn_id = t.id)
			FROM turns t WHERE `+promptTurnsWhere+` ORDER BY t.seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		index := map[int64]int{}
		for rows.Next() {
			var p PromptTurn
			var started, prev int64
			if err := rows.Scan(&p.ID, &started, &prev, &p.FirstSeq); err != nil {
				return err
			}
			p.N, p.Started = len(out)+1, fromNanos(started)
			if prev != 0 {
				p.PrevStarted = fromNanos(prev)
			}
			index[p.ID] = len(out)
			out = append(out, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return promptMessages(ctx, r, sessionID, out, index)
	})
	if err != nil {
		return nil, fmt.Errorf("store: prompt turns of session %s: %w", sessionID, err)
	}
	return out, nil
}

// promptMessages fills the Messages of turns (index: a turn's id → its
// place).
func promptMessages(ctx context.Context, r *sql.DB, sessionID string, turns []PromptTurn, index map[int64]int) error {
	rows, err := r.QueryContext(ctx, `SELECT i.turn_id, i.data FROM items i
		WHERE i.session_id = ? AND i.turn_id IS NOT NULL AND `+promptInput+` ORDER BY i.seq`, sessionID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var turn int64
		var data string
		if err := rows.Scan(&turn, &data); err != nil {
			return err
		}
		if k, ok := index[turn]; ok {
			turns[k].Messages = append(turns[k].Messages, json.RawMessage(data))
		}
	}
	return rows.Err()
}

// PromptTurnsAfter counts the session's prompt turns after turn afterID
// (0: all of them) and returns the last one's id (afterID when none).
func (b Branches) PromptTurnsAfter(ctx context.Context, sessionID string, afterID int64) (n int, last int64, err error) {
	err = b.db.read(func(r *sql.DB) error {
		var l sql.NullInt64
		if err := r.QueryRowContext(ctx, `SELECT count(*), max(t.id) FROM turns t WHERE `+promptTurnsWhere+` AND t.id > ?2`,
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

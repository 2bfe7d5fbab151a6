package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A session's transcript can branch: a rewind moves its model view back to
// before a turn (the later items stay, out of the view), and a fork copies
// its items up to a turn into a new session.

// Branches is what reshapes a session's model view without deleting
// items: compactions (older items replaced by a summary), rewinds (later
// items taken out) and forks (items copied into a new session). Reached by
// DB.Branches, it shares the DB's connections and compiled statements and
// lives as long as the DB; its calls fail with ErrClosed once Close began.
type Branches struct{ db *DB }

// Rewind is a range of a session's items out of its model view. A row
// lives as long as its session; a Rewind value is a snapshot.
type Rewind struct {
	FromSeq, ThroughSeq int64
}

// TurnSpan returns the seqs of the first and last items of a session's
// turn; ErrNotFound when the turn has none.
func (b Branches) TurnSpan(ctx context.Context, sessionID string, turnID int64) (first, last int64, err error) {
	err = b.db.read(func(r *sql.DB) error {
		var f, l sql.NullInt64
		if err := r.QueryRowContext(ctx, `SELECT min(seq), max(seq) FROM items WHERE session_id = ? AND turn_id = ?`,
			sessionID, turnID).Scan(&f, &l); err != nil {
			return err
		}
		if !f.Valid {
			return ErrNotFound
		}
		first, last = f.Int64, l.Int64
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: items of turn %d of session %s: %w", turnID, sessionID, err)
	}
	return first, last, nil
}

// AddRewind takes a session's items from fromSeq to its last out of the
// model view, and returns the range.
func (b Branches) AddRewind(ctx context.Context, sessionID string, fromSeq int64) (Rewind, error) {
	r := Rewind{FromSeq: fromSeq}
	err := b.db.write(ctx, func(tx *wtx) error {
		last, err := sessionTail(ctx, tx, sessionID, 0)
		if err != nil {
			return err
		}
		if fromSeq < 1 || fromSeq > last {
			return fmt.Errorf("no item %d to rewind from (the session has %d)", fromSeq, last)
		}
		r.ThroughSeq = last
		_, err = tx.ExecContext(ctx, `INSERT INTO rewinds (session_id, from_seq, through_seq, created) VALUES (?, ?, ?, ?)`,
			sessionID, fromSeq, last, nanos(now()))
		return err
	})
	if err != nil {
		return Rewind{}, fmt.Errorf("store: rewind session %s: %w", sessionID, err)
	}
	return r, nil
}

// Rewinds returns a session's rewound ranges, oldest first.
func (b Branches) Rewinds(ctx context.Context, sessionID string) ([]Rewind, error) {
	var out []Rewind
	err := b.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT from_seq, through_seq FROM rewinds WHERE session_id = ? ORDER BY id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w Rewind
			if err := rows.Scan(&w.FromSeq, &w.ThroughSeq); err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: rewinds of session %s: %w", sessionID, err)
	}
	return out, nil
}

// Fork copies session from's transcript up to item throughSeq into
// session to, which must exist and hold no item: its turns (as new rows,
// in order), its items with their seqs, the compactions and rewinds made
// before throughSeq. The read set is not copied: the fork's model is told
// of every file again. One transaction: all of it is copied, or nothing.
func (b Branches) Fork(ctx context.Context, from, to string, throughSeq int64) error {
	err := b.db.write(ctx, func(tx *wtx) error {
		if last, err := sessionTail(ctx, tx, to, 0); err != nil {
			return err
		} else if last != 0 {
			return errors.New("the new session has items already")
		}
		if _, err := sessionTail(ctx, tx, from, 0); err != nil {
			return err
		}
		return forkTx(ctx, tx, from, to, throughSeq)
	})
	if err != nil {
		return fmt.Errorf("store: fork session %s into %s: %w", from, to, err)
	}
	return nil
}

// forkTx copies the rows Fork copies, inside tx.
func forkTx(ctx context.Context, tx *wtx, from, to string, through int64) error {
	// The turns keep their seqs; each new turn's id is found by its seq.
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO turns (session_id, seq, status, stop_reason, error, started, ended)
		SELECT ?2, seq, status, stop_reason, error, started, ended FROM turns
		WHERE session_id = ?1 AND id IN (SELECT turn_id FROM items WHERE session_id = ?1 AND seq <= ?3)
		ORDER BY seq`, from, to, through); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO items (session_id, seq, turn_id, origin, type, data, view, created)
		SELECT ?2, i.seq, (SELECT n.id FROM turns n WHERE n.session_id = ?2 AND n.seq = o.seq),
			i.origin, i.type, i.data, i.view, i.created
		FROM items i LEFT JOIN turns o ON o.id = i.turn_id
		WHERE i.session_id = ?1 AND i.seq <= ?3`, from, to, through); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO compactions (session_id, through_seq, summary, response_id, reason, created)
		SELECT ?2, through_seq, summary, response_id, reason, created FROM compactions
		WHERE session_id = ?1 AND through_seq < ?3 ORDER BY id`, from, to, through); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO rewinds (session_id, from_seq, through_seq, created)
		SELECT ?2, from_seq, min(through_seq, ?3), created FROM rewinds
		WHERE session_id = ?1 AND from_seq <= ?3 ORDER BY id`, from, to, through)
	return err
}

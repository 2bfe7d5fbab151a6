package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Compaction is one replacement of a session's older items by a summary in
// the model's view (the items stay). A row lives as long as its session; a
// Compaction value is a snapshot.
type Compaction struct {
	ID         int64
	SessionID  string
	ThroughSeq int64 // the last item the summary replaces
	// Summary is the summary the model wrote; empty when the API compacted
	// (AddCompactionItems): its output, stored as the items right after
	// ThroughSeq, stands for everything up to it, and what it says is
	// sealed in its compaction item.
	Summary    string
	ResponseID string
	Reason     string
	Created    time.Time
}

// AddCompaction records a compaction of sessionID and returns its id.
func (b Branches) AddCompaction(ctx context.Context, c Compaction) (int64, error) {
	if c.Created.IsZero() {
		c.Created = now()
	}
	var id int64
	err := b.db.write(ctx, func(tx *wtx) error {
		if _, err := sessionTail(ctx, tx, c.SessionID, 0); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `
			INSERT INTO compactions (session_id, through_seq, summary, response_id, reason, created)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			c.SessionID, c.ThroughSeq, c.Summary, c.ResponseID, c.Reason, nanos(c.Created)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: add compaction to session %s: %w", c.SessionID, err)
	}
	return id, nil
}

// AddCompactionItems records a compaction by the API: items, its output,
// are appended to sessionID (in turnID, 0 for none) and c is recorded as
// replacing everything before them, in one transaction, so that a restart
// finds both or neither. c.ThroughSeq and c.Summary are set here (the
// session's last item before items; empty).
func (b Branches) AddCompactionItems(ctx context.Context, c Compaction, turnID int64, items []NewItem) (Compaction, []Item, error) {
	out, t, err := newItems(c.SessionID, turnID, items)
	if err != nil {
		return c, nil, fmt.Errorf("store: add compaction to session %s: %w", c.SessionID, err)
	}
	if c.Created.IsZero() {
		c.Created = t
	}
	c.Summary = ""
	err = b.db.write(ctx, func(tx *wtx) error {
		last, err := sessionTail(ctx, tx, c.SessionID, turnID)
		if err != nil {
			return err
		}
		c.ThroughSeq = last
		if err := appendItemsTx(ctx, tx, c.SessionID, turnID, out, t); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `
			INSERT INTO compactions (session_id, through_seq, summary, response_id, reason, created)
			VALUES (?, ?, '', ?, ?, ?) RETURNING id`,
			c.SessionID, c.ThroughSeq, c.ResponseID, c.Reason, nanos(c.Created)).Scan(&c.ID)
	})
	if err != nil {
		return c, nil, fmt.Errorf("store: add compaction to session %s: %w", c.SessionID, err)
	}
	return c, out, nil
}

// Compactions returns a session's compactions, oldest first.
func (b Branches) Compactions(ctx context.Context, sessionID string) ([]Compaction, error) {
	var out []Compaction
	err := b.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `
			SELECT id, through_seq, summary, response_id, reason, created
			FROM compactions WHERE session_id = ? ORDER BY id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c := Compaction{SessionID: sessionID}
			var created int64
			if err := rows.Scan(&c.ID, &c.ThroughSeq, &c.Summary, &c.ResponseID, &c.Reason, &created); err != nil {
				return err
			}
			c.Created = fromNanos(created)
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: compactions of session %s: %w", sessionID, err)
	}
	return out, nil
}

// LastCompaction returns a session's latest compaction; ErrNotFound when it
// has none.
func (b Branches) LastCompaction(ctx context.Context, sessionID string) (Compaction, error) {
	c := Compaction{SessionID: sessionID}
	err := b.db.read(func(r *sql.DB) error {
		var created int64
		err := r.QueryRowContext(ctx, `
			SELECT id, through_seq, summary, response_id, reason, created
			FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1`, sessionID).
			Scan(&c.ID, &c.ThroughSeq, &c.Summary, &c.ResponseID, &c.Reason, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		c.Created = fromNanos(created)
		return err
	})
	if err != nil {
		return c, fmt.Errorf("store: last compaction of session %s: %w", sessionID, err)
	}
	return c, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TurnStatus is where a turn stands. A turn is created running and ends
// exactly once in one of the other statuses.
type TurnStatus string

const (
	TurnRunning   TurnStatus = "running"
	TurnCompleted TurnStatus = "completed"
	TurnCancelled TurnStatus = "cancelled"
	TurnFailed    TurnStatus = "failed"
	// TurnInterrupted marks a turn that was running when the daemon died;
	// set by InterruptRunning at the next start.
	TurnInterrupted TurnStatus = "interrupted"
)

// ErrNotRunning is wrapped by EndTurn when the turn has already ended.
var ErrNotRunning = errors.New("store: turn not running")

// Turn is one user prompt and everything the model did in answer to it. The
// row lives as long as its session; a Turn value is a snapshot.
type Turn struct {
	ID         int64
	SessionID  string
	Seq        int // 1-based within the session
	Status     TurnStatus
	StopReason string
	Error      string
	Started    time.Time
	Ended      time.Time // zero while running
}

// BeginTurn starts the next turn of a session, running, and bumps the
// session's Updated time. It does not check that the previous turn ended:
// the session's serial loop guarantees that, and InterruptRunning cleans up
// after a crash.
func (it Items) BeginTurn(ctx context.Context, sessionID string) (Turn, error) {
	t := Turn{SessionID: sessionID, Status: TurnRunning, Started: now()}
	err := it.db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated = ? WHERE id = ?`, nanos(t.Started), sessionID)
		if err != nil {
			return err
		}
		if err := mustAffect(res); err != nil {
			return err
		}
		// Immediate transactions serialise writers, so max+1 cannot race.
		return tx.QueryRowContext(ctx, `
			INSERT INTO turns (session_id, seq, status, started)
			VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?1), ?2, ?3)
			RETURNING id, seq`,
			sessionID, string(TurnRunning), nanos(t.Started)).Scan(&t.ID, &t.Seq)
	})
	if err != nil {
		return Turn{}, fmt.Errorf("store: begin turn in session %s: %w", sessionID, err)
	}
	return t, nil
}

// EndTurn records how a running turn ended. It wraps ErrNotFound for an
// unknown turn and ErrNotRunning for one that has already ended.
func (it Items) EndTurn(ctx context.Context, turnID int64, status TurnStatus, stopReason, errMsg string) error {
	switch status {
	case TurnCompleted, TurnCancelled, TurnFailed, TurnInterrupted:
	default:
		return fmt.Errorf("store: end turn %d: invalid end status %q", turnID, status)
	}
	err := it.db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE turns SET status = ?, stop_reason = ?, error = ?, ended = ?
			WHERE id = ? AND status = 'running'`,
			string(status), stopReason, errMsg, nanos(now()), turnID)
		if err != nil {
			return err
		}
		if mustAffect(res) == nil {
			return nil
		}
		var cur string
		err = tx.QueryRowContext(ctx, `SELECT status FROM turns WHERE id = ?`, turnID).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w (already %s)", ErrNotRunning, cur)
	})
	if err != nil {
		return fmt.Errorf("store: end turn %d as %s: %w", turnID, status, err)
	}
	return nil
}

// Turns returns the turns of a session in order. An unknown session has no
// turns.
func (it Items) Turns(ctx context.Context, sessionID string) ([]Turn, error) {
	var out []Turn
	err := it.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `
			SELECT id, seq, status, stop_reason, error, started, ended
			FROM turns WHERE session_id = ? ORDER BY seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t := Turn{SessionID: sessionID}
			var started int64
			var ended sql.NullInt64
			if err := rows.Scan(&t.ID, &t.Seq, &t.Status, &t.StopReason, &t.Error, &started, &ended); err != nil {
				return err
			}
			t.Started, t.Ended = fromNanos(started), fromNullNanos(ended)
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: turns of session %s: %w", sessionID, err)
	}
	return out, nil
}

// InterruptRunning marks every running turn interrupted. The daemon calls it
// at start, before serving: any turn still running then was cut short by a
// crash or kill. It returns how many turns it marked.
func (it Items) InterruptRunning(ctx context.Context) (int64, error) {
	var n int64
	err := it.db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE turns SET status = 'interrupted', ended = ?,
				error = CASE error WHEN '' THEN 'daemon stopped during the turn' ELSE error END
			WHERE status = 'running'`, nanos(now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: interrupt running turns: %w", err)
	}
	return n, nil
}

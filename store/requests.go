package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Requests is the request log: every request to the model API with its
// usage, and the commits a conversation makes ahead of its next request
// (Staged). Reached by DB.Requests, it shares the DB's connections and
// compiled statements and lives as long as the DB; its calls fail with
// ErrClosed once Close began.
type Requests struct{ db *DB }

// RequestKind says how much of the transcript a model request carried.
type RequestKind string

const (
	KindWarmup      RequestKind = "warmup"      // opens the connection and cache before any turn
	KindFull        RequestKind = "full"        // the whole input, no previous_response_id
	KindIncremental RequestKind = "incremental" // only new items after previous_response_id
)

// Request statuses: a request is inserted "sent" and finished once.
const (
	RequestSent       = "sent"
	RequestCompleted  = "completed"
	RequestFailed     = "failed"
	RequestIncomplete = "incomplete"
	RequestCancelled  = "cancelled"
)

// Request is one request to the model API, kept to explain cost and cache
// behaviour after the fact. The row lives as long as its session; a Request
// value is a snapshot. It holds no headers: the API key is never stored.
type Request struct {
	ID                 int64
	SessionID          string
	TurnID             int64  // 0 = none (warm-up)
	Conn               string // connection id, e.g. "ws-3" or "http"
	Kind               RequestKind
	FullReason         string // why the request was full; "" for incremental
	PreviousResponseID string
	ResponseID         string
	BytesSent          int64
	InputItems         int // items in the input actually sent
	Status             string
	Error              string
	Sent               time.Time // zero = not yet; Requests.Insert defaults it to now
	FirstEvent         time.Time // zero = not yet
	Finished           time.Time // zero = not yet
	Usage              Usage     // what the response reported; zero until it completed
}

// Usage is a response's token accounting, as the API reports it.
type Usage struct {
	Input     int64 // input tokens, cached ones included
	Cached    int64 // input tokens served from the server's prompt cache
	Output    int64 // output tokens, reasoning ones included
	Reasoning int64 // tokens the model spent thinking
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Cached + v.Cached, u.Output + v.Output, u.Reasoning + v.Reasoning}
}

// CacheHitRatio is the share of input tokens served from the prompt cache;
// 0 when there was no input.
func (u Usage) CacheHitRatio() float64 {
	if u.Input == 0 {
		return 0
	}
	return float64(u.Cached) / float64(u.Input)
}

// Insert logs a request and returns its id. Status defaults to
// "sent" and Sent to now.
func (rq Requests) Insert(ctx context.Context, r Request) (int64, error) {
	id, _, err := rq.InsertAfter(ctx, r, Staged{})
	return id, err
}

// Completion is a request's successful end, with its usage: committed by
// Requests.Complete, or staged with what follows it (Staged.End).
type Completion struct {
	ID         int64
	ResponseID string
	Status     string    // RequestCompleted or RequestIncomplete
	FirstEvent time.Time // zero keeps what was stored
	Finished   time.Time // zero means now
	Usage      Usage
}

// Staged is what a conversation commits in one transaction ahead of its
// next request, in this order: a response's end, items (appended to the
// session, in the turn: the response's output, then what answers it) and
// read-set updates. A Staged value lives for one call.
type Staged struct {
	End   *Completion
	Items []NewItem
	Seen  []SeenWrite
}

// check validates s before anything is written and builds its items.
func (s Staged) check(sessionID string, turnID int64) ([]Item, time.Time, error) {
	if e := s.End; e != nil && e.Status != RequestCompleted && e.Status != RequestIncomplete {
		return nil, time.Time{}, fmt.Errorf("complete request %d: invalid status %q", e.ID, e.Status)
	}
	return newItems(sessionID, turnID, s.Items)
}

// stagedTx writes s (checked: out and t are check's) inside tx.
func stagedTx(ctx context.Context, tx *wtx, sessionID string, turnID int64, s Staged, out []Item, t time.Time) error {
	if e := s.End; e != nil {
		if err := completeTx(ctx, tx, sessionID, *e); err != nil {
			return err
		}
	}
	if len(out) > 0 {
		// appendItemsTx checks the session and the turn.
		if err := appendItemsTx(ctx, tx, sessionID, turnID, out, t); err != nil {
			return err
		}
	} else if _, err := sessionTail(ctx, tx, sessionID, turnID); err != nil {
		return err
	}
	for _, w := range s.Seen {
		if err := setSeenTx(ctx, tx, sessionID, w.Path, w.Seen); err != nil {
			return err
		}
	}
	return nil
}

// CommitStaged commits s in one transaction (a turn's staged outputs when
// no request will carry them) and returns the items as stored (sharing
// the Staged items' bytes).
func (rq Requests) CommitStaged(ctx context.Context, sessionID string, turnID int64, s Staged) ([]Item, error) {
	out, t, err := s.check(sessionID, turnID)
	if err != nil {
		return nil, fmt.Errorf("store: commit to session %s: %w", sessionID, err)
	}
	if err := rq.db.write(ctx, func(tx *wtx) error { return stagedTx(ctx, tx, sessionID, turnID, s, out, t) }); err != nil {
		return nil, fmt.Errorf("store: commit to session %s: %w", sessionID, err)
	}
	return out, nil
}

// InsertAfter commits s (in r's session and turn), then logs r, all
// in one transaction: what a request carries is in the store before the
// request is, and a read round trip commits once. It returns the request's
// id and the items as stored.
func (rq Requests) InsertAfter(ctx context.Context, r Request, s Staged) (int64, []Item, error) {
	r, out, t, err := checkRequest(r, s)
	if err != nil {
		return 0, nil, err
	}
	var id int64
	err = rq.db.write(ctx, func(tx *wtx) error {
		if err := stagedTx(ctx, tx, r.SessionID, r.TurnID, s, out, t); err != nil {
			return err
		}
		// The new row's id is its rowid: an Exec, no rows to read.
		res, err := tx.ExecContext(ctx, `
			INSERT INTO requests (session_id, turn_id, conn, kind, full_reason,
				previous_response_id, response_id, bytes_sent, input_items,
				status, error, sent, first_event, finished)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.SessionID, nullID(r.TurnID), r.Conn, string(r.Kind), r.FullReason,
			r.PreviousResponseID, r.ResponseID, r.BytesSent, r.InputItems,
			r.Status, r.Error, nullNanos(r.Sent), nullNanos(r.FirstEvent), nullNanos(r.Finished))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("store: insert request in session %s: %w", r.SessionID, err)
	}
	return id, out, nil
}

// checkRequest validates r and s before anything is written, fills r's
// defaults (status "sent", sent now) and builds s's items.
func checkRequest(r Request, s Staged) (Request, []Item, time.Time, error) {
	switch r.Kind {
	case KindWarmup, KindFull, KindIncremental:
	default:
		return r, nil, time.Time{}, fmt.Errorf("store: insert request in session %s: invalid kind %q", r.SessionID, r.Kind)
	}
	if r.Status == "" {
		r.Status = RequestSent
	}
	if r.Sent.IsZero() {
		r.Sent = now()
	}
	out, t, err := s.check(r.SessionID, r.TurnID)
	if err != nil {
		return r, nil, t, fmt.Errorf("store: insert request in session %s: %w", r.SessionID, err)
	}
	return r, out, t, nil
}

// Finish records the outcome of a request. An empty responseID or a
// zero firstEvent keeps what was stored (the response may have failed before
// either was known); a zero finished means now.
func (rq Requests) Finish(ctx context.Context, id int64, responseID, status, errMsg string, firstEvent, finished time.Time) error {
	switch status {
	case RequestCompleted, RequestFailed, RequestIncomplete, RequestCancelled:
	default:
		return fmt.Errorf("store: finish request %d: invalid status %q", id, status)
	}
	if finished.IsZero() {
		finished = now()
	}
	err := rq.db.write(ctx, func(tx *wtx) error {
		return finishRequestTx(ctx, tx, id, responseID, status, errMsg, firstEvent, finished)
	})
	if err != nil {
		return fmt.Errorf("store: finish request %d: %w", id, err)
	}
	return nil
}

func finishRequestTx(ctx context.Context, tx *wtx, id int64, responseID, status, errMsg string, firstEvent, finished time.Time) error {
	res, err := tx.ExecContext(ctx, `
		UPDATE requests SET
			response_id = CASE ?1 WHEN '' THEN response_id ELSE ?1 END,
			status = ?2, error = ?3,
			first_event = coalesce(?4, first_event),
			finished = ?5
		WHERE id = ?6`,
		responseID, status, errMsg, nullNanos(firstEvent), nanos(finished), id)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// Complete records a request's successful end and its usage and
// appends the response's output items to the transcript, in one
// transaction: CommitStaged with the end and the items.
func (rq Requests) Complete(ctx context.Context, id int64, responseID, status string, firstEvent, finished time.Time,
	usage Usage, sessionID string, turnID int64, items []NewItem) ([]Item, error) {
	return rq.CommitStaged(ctx, sessionID, turnID, Staged{Items: items,
		End: &Completion{ID: id, ResponseID: responseID, Status: status, FirstEvent: firstEvent, Finished: finished, Usage: usage}})
}

// completeTx records e, the end of a request of sessionID, inside tx; a
// request of another session is not found.
func completeTx(ctx context.Context, tx *wtx, sessionID string, e Completion) error {
	if e.Finished.IsZero() {
		e.Finished = now()
	}
	res, err := tx.ExecContext(ctx, `
		UPDATE requests SET
			response_id = CASE ?1 WHEN '' THEN response_id ELSE ?1 END,
			status = ?2, error = '',
			first_event = coalesce(?3, first_event),
			finished = ?4,
			input_tokens = ?5, cached_tokens = ?6, output_tokens = ?7, reasoning_tokens = ?8
		WHERE id = ?9 AND session_id = ?10`,
		e.ResponseID, e.Status, nullNanos(e.FirstEvent), nanos(e.Finished),
		e.Usage.Input, e.Usage.Cached, e.Usage.Output, e.Usage.Reasoning, e.ID, sessionID)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// List returns the requests of a session in ID (that is, send) order.
func (rq Requests) List(ctx context.Context, sessionID string) ([]Request, error) {
	var out []Request
	err := rq.db.read(func(rd *sql.DB) error {
		rows, err := rd.QueryContext(ctx, `
			SELECT id, turn_id, conn, kind, full_reason, previous_response_id, response_id,
				bytes_sent, input_items, status, error, sent, first_event, finished,
				input_tokens, cached_tokens, output_tokens, reasoning_tokens
			FROM requests WHERE session_id = ? ORDER BY id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := Request{SessionID: sessionID}
			var turn, sent, first, finished sql.NullInt64
			if err := rows.Scan(&r.ID, &turn, &r.Conn, &r.Kind, &r.FullReason,
				&r.PreviousResponseID, &r.ResponseID, &r.BytesSent, &r.InputItems,
				&r.Status, &r.Error, &sent, &first, &finished,
				&r.Usage.Input, &r.Usage.Cached, &r.Usage.Output, &r.Usage.Reasoning); err != nil {
				return err
			}
			r.TurnID = turn.Int64
			r.Sent, r.FirstEvent, r.Finished = fromNullNanos(sent), fromNullNanos(first), fromNullNanos(finished)
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: requests of session %s: %w", sessionID, err)
	}
	return out, nil
}

// LastCounted returns the last request of a session whose response
// reported usage (input tokens); ErrNotFound when none did. It is what a
// reopened conversation knows of how full its context is.
func (rq Requests) LastCounted(ctx context.Context, sessionID string) (Request, error) {
	r := Request{SessionID: sessionID}
	err := rq.db.read(func(rd *sql.DB) error {
		var turn, sent sql.NullInt64
		err := rd.QueryRowContext(ctx, `
			SELECT id, turn_id, kind, response_id, status, sent,
				input_tokens, cached_tokens, output_tokens, reasoning_tokens
			FROM requests WHERE session_id = ? AND input_tokens > 0 ORDER BY id DESC LIMIT 1`, sessionID).
			Scan(&r.ID, &turn, &r.Kind, &r.ResponseID, &r.Status, &sent,
				&r.Usage.Input, &r.Usage.Cached, &r.Usage.Output, &r.Usage.Reasoning)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		r.TurnID, r.Sent = turn.Int64, fromNullNanos(sent)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("store: last counted request of session %s: %w", sessionID, err)
	}
	return r, nil
}

// Usage sums the usage of every request of a session.
func (rq Requests) Usage(ctx context.Context, sessionID string) (Usage, error) {
	var u Usage
	err := rq.db.read(func(rd *sql.DB) error {
		return rd.QueryRowContext(ctx, `
			SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_tokens), 0),
				coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_tokens), 0)
			FROM requests WHERE session_id = ?`, sessionID).Scan(&u.Input, &u.Cached, &u.Output, &u.Reasoning)
	})
	if err != nil {
		return Usage{}, fmt.Errorf("store: usage of session %s: %w", sessionID, err)
	}
	return u, nil
}

// LastID returns the id of the session's newest request, 0 when it has
// none: the mark a turn's usage is summed from (UsageAfter).
func (rq Requests) LastID(ctx context.Context, sessionID string) (int64, error) {
	var id int64
	err := rq.db.read(func(rd *sql.DB) error {
		return rd.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM requests WHERE session_id = ?`, sessionID).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: last request of session %s: %w", sessionID, err)
	}
	return id, nil
}

// UsageAfter sums the usage of the session's turn requests after the
// request afterID: what one turn cost. Warm-ups (no turn) are left out,
// since one may finish while the turn runs.
func (rq Requests) UsageAfter(ctx context.Context, sessionID string, afterID int64) (Usage, error) {
	var u Usage
	err := rq.db.read(func(rd *sql.DB) error {
		return rd.QueryRowContext(ctx, `
			SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_tokens), 0),
				coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_tokens), 0)
			FROM requests WHERE session_id = ? AND id > ? AND coalesce(turn_id, 0) != 0`,
			sessionID, afterID).Scan(&u.Input, &u.Cached, &u.Output, &u.Reasoning)
	})
	if err != nil {
		return Usage{}, fmt.Errorf("store: usage of session %s after request %d: %w", sessionID, afterID, err)
	}
	return u, nil
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Items is a session's transcript in the store: its items, exactly as
// exchanged with the model, and the turns they belong to. Reached by
// DB.Items, it shares the DB's connections and compiled statements and
// lives as long as the DB; its calls fail with ErrClosed once Close began.
type Items struct{ db *DB }

// Origin says which side of the conversation produced an item.
type Origin string

const (
	// OriginInput: hearth sent it (user message, context delta,
	// function_call_output).
	OriginInput Origin = "input"
	// OriginOutput: the model produced it.
	OriginOutput Origin = "output"
)

// NewItem is an item to append; it lives only for the Items.Append call.
type NewItem struct {
	Origin Origin
	Data   json.RawMessage // a JSON object, kept byte for byte
	View   json.RawMessage // optional: how the editor shows the item (a tool result's title, locations, diff); never sent to the model
}

// Item is one entry of a session's transcript, as the exact JSON sent to or
// received from the model. The row lives as long as its session; an Item
// value is a snapshot.
type Item struct {
	Seq       int64 // 1..n within the session, without gaps
	SessionID string
	TurnID    int64 // 0 when the item belongs to no turn (initial context)
	Origin    Origin
	Type      string          // the JSON "type" member, "" if absent or not a string
	Data      json.RawMessage // byte-exact
	View      json.RawMessage // nil when none was stored
	Created   time.Time
}

// Append appends items to the end of a session's transcript in one
// transaction: all are written, numbered after the existing ones, or none
// are. Every Data must be a JSON object; the batch is checked before
// anything is written. turnID 0 stores the items outside any turn; a
// non-zero turnID must be a turn of the same session. The Items it returns
// share the NewItems' Data and View.
func (it Items) Append(ctx context.Context, sessionID string, turnID int64, items []NewItem) ([]Item, error) {
	out, t, err := newItems(sessionID, turnID, items)
	if err != nil {
		return nil, fmt.Errorf("store: append items to session %s: %w", sessionID, err)
	}
	if len(items) == 0 {
		return out, nil
	}
	err = it.db.write(ctx, func(tx *wtx) error { return appendItemsTx(ctx, tx, sessionID, turnID, out, t) })
	if err != nil {
		return nil, fmt.Errorf("store: append items to session %s: %w", sessionID, err)
	}
	return out, nil
}

// newItems checks a batch and builds its Items (Seq still unset).
func newItems(sessionID string, turnID int64, items []NewItem) ([]Item, time.Time, error) {
	out := make([]Item, len(items))
	t := now()
	for i, it := range items {
		typ, err := checkItem(it)
		if err != nil {
			return nil, t, fmt.Errorf("item %d: %w", i, err)
		}
		if it.View != nil && !json.Valid(it.View) {
			return nil, t, fmt.Errorf("item %d: view is not JSON", i)
		}
		// Not copied: an item can be megabytes (a long answer), and the
		// database keeps its own copy. The items returned share the bytes.
		out[i] = Item{SessionID: sessionID, TurnID: turnID, Origin: it.Origin, Type: typ,
			Data: it.Data, View: it.View, Created: t}
	}
	return out, t, nil
}

// appendItemsTx numbers out after the session's last item and inserts it,
// inside tx.
func appendItemsTx(ctx context.Context, tx *wtx, sessionID string, turnID int64, out []Item, t time.Time) error {
	// Immediate transactions serialise writers, so last+1 cannot race;
	// the primary key would refuse a duplicate anyway.
	last, err := sessionTail(ctx, tx, sessionID, turnID)
	if err != nil {
		return err
	}
	const insert = `
		INSERT INTO items (session_id, seq, turn_id, origin, type, data, view, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	for i := range out {
		out[i].Seq = last + int64(i) + 1
		// Data goes in as TEXT (string), not BLOB: SQLite's JSON
		// functions read a BLOB as binary JSONB. The string shares Data's
		// bytes (SQLite copies what it binds, SQLITE_TRANSIENT): a long
		// answer is not copied once more on its way.
		data := unsafe.String(unsafe.SliceData(out[i].Data), len(out[i].Data))
		exec := tx.ExecContext
		if len(data) >= bigItem {
			exec = tx.ExecOnce // the cached statement would hold its copy until the next item
		}
		if _, err := exec(ctx, insert, sessionID, out[i].Seq, nullID(turnID),
			string(out[i].Origin), out[i].Type, data, nullText(out[i].View), nanos(t)); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

// bigItem is the size of an item written with a statement of its own.
const bigItem = 1 << 20

// checkItem validates a NewItem and returns its "type" member.
func checkItem(it NewItem) (string, error) {
	if it.Origin != OriginInput && it.Origin != OriginOutput {
		return "", fmt.Errorf("invalid origin %q", it.Origin)
	}
	if json.Valid(it.Data) {
		if typ, ok := objectType(it.Data); ok {
			return typ, nil
		}
	}
	// Not an object: unmarshalling into a map says why. (A map, not a
	// struct: struct fields would match "Type" case-insensitively.)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(it.Data, &members); err != nil {
		return "", fmt.Errorf("data is not a JSON object: %w", err)
	}
	if members == nil { // the literal null
		return "", errors.New("data is not a JSON object: null")
	}
	var typ string
	if raw, ok := members["type"]; ok {
		_ = json.Unmarshal(raw, &typ) // a non-string type is kept as ""
	}
	return typ, nil
}

// sessionTail checks, in one query, that sessionID exists (else
// ErrNotFound) and that turnID is 0 or one of its turns (ErrNotFound if it
// is no turn, an error naming the owner if it is another session's), and
// returns the Seq of the session's last item (0 when it has none).
func sessionTail(ctx context.Context, tx *wtx, sessionID string, turnID int64) (int64, error) {
	var exists bool
	var owner string
	var last int64
	if err := tx.QueryRowContext(ctx, `
		SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1),
			coalesce((SELECT session_id FROM turns WHERE id = ?2), ''),
			(SELECT coalesce(max(seq), 0) FROM items WHERE session_id = ?1)`,
		sessionID, turnID).Scan(&exists, &owner, &last); err != nil {
		return 0, err
	}
	switch {
	case !exists:
		return 0, fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	case turnID == 0:
	case owner == "":
		return 0, fmt.Errorf("turn %d: %w", turnID, ErrNotFound)
	case owner != sessionID:
		return 0, fmt.Errorf("turn %d belongs to session %s", turnID, owner)
	}
	return last, nil
}

// nullText stores nil as NULL, anything else as TEXT.
func nullText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// nullID stores an id of 0 as NULL.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// List returns a session's whole transcript in Seq order.
func (it Items) List(ctx context.Context, sessionID string) ([]Item, error) {
	return it.After(ctx, sessionID, 0)
}

// After returns the items of a session with Seq > after, in order.
func (it Items) After(ctx context.Context, sessionID string, after int64) ([]Item, error) {
	return it.Page(ctx, sessionID, after, -1)
}

// Page returns at most limit items of a session with Seq > after, in
// order (limit < 0: all of them). Reading a long transcript page by page,
// each page after the last Seq of the one before, keeps memory bounded.
func (it Items) Page(ctx context.Context, sessionID string, after int64, limit int) ([]Item, error) {
	var out []Item
	err := it.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `
			SELECT seq, turn_id, origin, type, data, view, created
			FROM items WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			item := Item{SessionID: sessionID}
			var turn sql.NullInt64
			var created int64
			var data, view []byte // Scan copies into fresh slices; view stays nil for NULL
			if err := rows.Scan(&item.Seq, &turn, &item.Origin, &item.Type, &data, &view, &created); err != nil {
				return err
			}
			item.TurnID, item.Data, item.View, item.Created = turn.Int64, data, view, fromNanos(created)
			out = append(out, item)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: items of session %s: %w", sessionID, err)
	}
	return out, nil
}

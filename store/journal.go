package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"
)

// The journal takes the SQLite transaction of a model round trip off the
// path between a response and the next request. JournalRequest writes what
// InsertRequestAfter would commit as one record, with one write(2), to the
// file path+"-redo"; the caller sends the request and calls Flush once the
// server has answered, which applies the record to SQLite while the model
// works. A record in
// the journal is as durable as a commit: SQLite's log is written without
// fsync too (synchronous=NORMAL), so either survives the process being
// killed and neither a power cut. Every other write and every read applies
// a pending record first, so nothing in the process ever sees the database
// without it, and Open applies what a killed process left (replay).
//
// Measured on a 2-core VM under hearth bench's reference cost model
// (docs/BENCHMARKS.md): the transaction took ~0.7 ms p50 on the round trip,
// its code and pages cold after the wait for the model; JournalRequest
// ~0.13 ms there, 26–28 µs back to back.
//
// One process journals a database at a time: the one holding the file's
// flock. Another process writing the same database (hearth ask --no-daemon
// beside a daemon) commits directly; if it takes a request id the journal
// had handed out, the record gets a new one when applied and the store
// maps the old one to it (remap), so the ids the caller holds stay right.

// journalRecord is one JournalRequest: a request row and the staged writes
// committed with it. Data and View are []byte, not json.RawMessage, so that
// encoding keeps them byte for byte.
type journalRecord struct {
	Req     Request
	End     *Completion   `json:",omitempty"`
	Items   []journalItem `json:",omitempty"`
	Seen    []SeenWrite   `json:",omitempty"`
	Created int64         // the items' created time, as check gave it
}

type journalItem struct {
	Origin Origin
	Data   []byte
	View   []byte `json:",omitempty"`
}

func (rec *journalRecord) staged() Staged {
	s := Staged{End: rec.End, Seen: rec.Seen}
	for _, it := range rec.Items {
		s.Items = append(s.Items, NewItem{Origin: it.Origin, Data: it.Data, View: it.View})
	}
	return s
}

// journal is the open journal file and what the writer knows beyond
// SQLite. Created by openJournal in Open, closed by Close; everything in it
// is guarded by DB.wmu.
type journal struct {
	f       *os.File // flocked, 0600: at most one record, at offset 0
	path    string
	pending *journalRecord   // written, not applied yet
	lastReq int64            // the highest request id SQLite holds or the journal handed out
	turns   map[int64]string // turn → session, checked by a transaction and running since
	remap   map[int64]int64  // an id handed out → the one SQLite gave the row
}

// journalSuffix names the journal after the database. Not "-journal":
// SQLite takes a file of that name for its own rollback journal and
// deletes it on open.
const journalSuffix = "-redo"

// recordHeader is a record's length and CRC-32C, little-endian.
const recordHeader = 8

// maxRecord bounds a record read back: a length beyond it is a torn or
// foreign file, not a record.
const maxRecord = 256 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openJournal opens and locks db's journal and applies what it holds. The
// DB then journals; without the lock (another process journals it, or the
// platform has no flock) it commits directly and jr stays nil.
func (db *DB) openJournal(ctx context.Context) error {
	path := db.path + journalSuffix
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if !lockFile(f) {
		f.Close()
		return nil
	}
	jr := &journal{f: f, path: path, turns: map[int64]string{}, remap: map[int64]int64{}}
	rec, err := readJournal(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	db.jr = jr
	fail := func(err error) error {
		db.jr = nil
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := db.wconn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM requests`).Scan(&jr.lastReq); err != nil {
		return fail(err)
	}
	if rec != nil {
		err := db.applyRecord(ctx, rec)
		if errors.Is(err, ErrNotFound) && rec.End != nil {
			// The end of a request whose id another process had taken
			// (the dead process's remap is gone; completeTx checks the
			// row's session): the rest goes in without that bookkeeping.
			rec.End = nil
			err = db.applyRecord(ctx, rec)
		}
		// A session deleted since (the record was applied, and the
		// journal not cleared before the process ended) is no loss.
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fail(fmt.Errorf("replay a request of session %s: %w", rec.Req.SessionID, err))
		}
	}
	if err := jr.clear(); err != nil {
		return fail(err)
	}
	return nil
}

// readJournal returns the record in f, or nil when there is none: the
// file is empty or cleared (a zero length), or the record is torn (short,
// or its checksum wrong: a write cut short by the process's end, whose
// request was therefore never sent).
func readJournal(f *os.File) (*journalRecord, error) {
	var h [recordHeader]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[:])
	if n == 0 || n > maxRecord {
		return nil, nil
	}
	payload := make([]byte, n)
	if _, err := f.ReadAt(payload, recordHeader); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, nil
	}
	rec := new(journalRecord)
	if err := json.Unmarshal(payload, rec); err != nil {
		return nil, fmt.Errorf("the record: %w", err)
	}
	return rec, nil
}

// JournalRequest does what InsertRequestAfter does — s, then r's row, as
// one atomic write that is in the store before the request is sent — but
// through the journal when it can: one write(2) instead of a transaction.
// The caller sends the request, then calls Flush. It returns the request's
// id. Without a journal, or for a turn no transaction of this DB has
// checked yet, it is InsertRequestAfter (an unknown session or turn is
// refused here, not when the record is applied).
func (db *DB) JournalRequest(ctx context.Context, r Request, s Staged) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	done, err := db.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	db.wmu.Lock()
	jr := db.jr
	journaled := jr != nil && r.TurnID != 0 && jr.turns[r.TurnID] == r.SessionID
	if !journaled {
		db.wmu.Unlock()
		id, _, err := db.InsertRequestAfter(ctx, r, s)
		return id, err
	}
	defer db.wmu.Unlock()
	if err := db.applyLocked(ctx); err != nil {
		return 0, fmt.Errorf("store: insert request in session %s: %w", r.SessionID, err)
	}
	r, out, t, err := checkRequest(r, s)
	if err != nil {
		return 0, err
	}
	r.ID = jr.lastReq + 1
	rec := &journalRecord{Req: r, End: s.End, Seen: s.Seen, Created: nanos(t)}
	for _, it := range out {
		rec.Items = append(rec.Items, journalItem{Origin: it.Origin, Data: it.Data, View: it.View})
	}
	if err := jr.append(rec); err != nil {
		return 0, fmt.Errorf("store: insert request in session %s: journal: %w", r.SessionID, err)
	}
	jr.lastReq = r.ID
	jr.pending = rec
	db.jpending.Store(true)
	return r.ID, nil
}

// append writes rec as the journal's record, over what was there: the
// file keeps its blocks and cached pages, so the write allocates none
// (truncating to empty after each record made every write allocate them
// again). A failed write clears the record again.
func (jr *journal) append(rec *journalRecord) error {
	payload, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if len(payload) > maxRecord {
		return fmt.Errorf("record of %d bytes is too large", len(payload))
	}
	buf := make([]byte, recordHeader, recordHeader+len(payload))
	binary.LittleEndian.PutUint32(buf, uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(payload, castagnoli))
	buf = append(buf, payload...)
	if _, err := jr.f.WriteAt(buf, 0); err != nil {
		if cerr := jr.clear(); cerr != nil {
			return fmt.Errorf("%w (and clearing it failed: %v)", err, cerr)
		}
		return err
	}
	return nil
}

// clear marks the journal empty: a zero length where the record begins.
func (jr *journal) clear() error {
	var zero [recordHeader]byte
	_, err := jr.f.WriteAt(zero[:], 0)
	return err
}

// Flush applies the journal's pending record to SQLite, if there is one.
// The record is durable already; an error here (the disk full, say) leaves
// it pending, and the next write, read or Open applies it.
func (db *DB) Flush(ctx context.Context) error {
	if !db.jpending.Load() {
		return nil
	}
	if err := db.withWriter(ctx, nil); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// applyLocked applies the pending record and empties the journal. Called
// with wmu held.
func (db *DB) applyLocked(ctx context.Context) error {
	jr := db.jr
	if jr == nil || jr.pending == nil {
		return nil
	}
	if err := db.applyRecord(ctx, jr.pending); err != nil {
		return err
	}
	jr.pending = nil
	db.jpending.Store(false)
	// Cleared, the file cannot replay the record. Should clearing fail,
	// a replay recognises it as applied.
	_ = jr.clear()
	return nil
}

// applyRecord commits rec to SQLite in one transaction. A record already
// applied (the process ended between the commit and the truncation) is
// recognised by its request row and skipped.
func (db *DB) applyRecord(ctx context.Context, rec *journalRecord) error {
	jr := db.jr
	r := rec.Req
	s := rec.staged()
	if s.End != nil {
		e := *s.End
		e.ID = jr.id(e.ID)
		s.End = &e
	}
	out, _, err := s.check(r.SessionID, r.TurnID)
	if err != nil {
		return err
	}
	t := time.Unix(0, rec.Created).UTC()
	id := r.ID
	err = db.txLocked(ctx, func(tx *wtx) error {
		var owner string
		var sent sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT session_id, sent FROM requests WHERE id = ?`, id).Scan(&owner, &sent)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case owner == r.SessionID && sent.Valid && sent.Int64 == nanos(r.Sent):
			return errApplied
		default:
			id = 0 // another process took it: SQLite picks one
		}
		if err := stagedTx(ctx, tx, r.SessionID, r.TurnID, s, out, t); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `
			INSERT INTO requests (id, session_id, turn_id, conn, kind, full_reason,
				previous_response_id, response_id, bytes_sent, input_items,
				status, error, sent, first_event, finished)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nullID(id), r.SessionID, nullID(r.TurnID), r.Conn, string(r.Kind), r.FullReason,
			r.PreviousResponseID, r.ResponseID, r.BytesSent, r.InputItems,
			r.Status, r.Error, nullNanos(r.Sent), nullNanos(r.FirstEvent), nullNanos(r.Finished))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil && !errors.Is(err, errApplied) {
		return err
	}
	if err == nil && id != r.ID {
		jr.remap[r.ID] = id
	}
	jr.lastReq = max(jr.lastReq, id)
	return nil
}

// errApplied ends the transaction of a record found already applied.
var errApplied = errors.New("store: journal record already applied")

// id maps an id the journal handed out to the row's.
func (jr *journal) id(id int64) int64 {
	if jr == nil {
		return id
	}
	if real, ok := jr.remap[id]; ok {
		return real
	}
	return id
}

// checkedTurn notes that a transaction found turnID running in sessionID:
// the session's requests in it may go through the journal.
func (jr *journal) checkedTurn(sessionID string, turnID int64) {
	if jr != nil && turnID != 0 {
		jr.turns[turnID] = sessionID
	}
}

// forgetTurn drops what checkedTurn noted of a turn that ends, and
// forgetTurns all of it when sessions go or turns are interrupted: a
// request in them is checked by a transaction again.
func (jr *journal) forgetTurn(turnID int64) {
	if jr != nil {
		delete(jr.turns, turnID)
	}
}

func (jr *journal) forgetTurns() {
	if jr != nil {
		clear(jr.turns)
	}
}

// closeJournal applies what is pending and closes the journal, removing
// its file when nothing is left to replay. Called by Close with wmu held.
func (db *DB) closeJournal(ctx context.Context) error {
	jr := db.jr
	if jr == nil {
		return nil
	}
	err := db.applyLocked(ctx)
	if err == nil {
		os.Remove(jr.path) // nothing to replay
	}
	db.jr = nil
	return errors.Join(err, jr.f.Close())
}

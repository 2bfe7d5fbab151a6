package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestAppendItemsContiguous(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")

	// Initial context before any turn, then two batches in a turn.
	got, err := db.Items().Append(ctx, "s1", 0, []NewItem{
		{Origin: OriginInput, Data: []byte(`{"type":"message","role":"developer","content":"AGENTS.md"}`)},
		{Origin: OriginInput, Data: []byte(`{"type":"message","role":"user","content":"hi"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Seq != 1 || got[1].Seq != 2 || got[0].TurnID != 0 {
		t.Fatalf("first batch = %+v", got)
	}
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Items().Append(ctx, "s2", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := db.Items().Append(ctx, "s1", turn.ID, []NewItem{{Origin: OriginOutput, Data: []byte(`{"type":"reasoning"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.Items().Append(ctx, "s1", turn.ID, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty batch = %v, %v", got, err)
	}

	items, err := db.Items().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("len(items) = %d, want 5", len(items))
	}
	for i, it := range items {
		if it.Seq != int64(i+1) || it.SessionID != "s1" {
			t.Errorf("items[%d] = seq %d session %s", i, it.Seq, it.SessionID)
		}
		wantTurn := int64(0)
		if i >= 2 {
			wantTurn = turn.ID
		}
		if it.TurnID != wantTurn {
			t.Errorf("items[%d].TurnID = %d, want %d", i, it.TurnID, wantTurn)
		}
	}
	if items[0].Origin != OriginInput || items[4].Origin != OriginOutput || items[4].Type != "reasoning" {
		t.Errorf("origin/type not kept: %+v %+v", items[0], items[4])
	}
	after, err := db.Items().After(ctx, "s1", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after[0].Seq != 4 {
		t.Errorf("Items.After(3) = %+v", after)
	}
	if s2, _ := db.Items().List(ctx, "s2"); len(s2) != 1 || s2[0].Seq != 1 {
		t.Errorf("s2 items = %+v, want its own seq 1", s2)
	}
}

func TestAppendItemsRejectsInvalidBatch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"message"}`)}}); err != nil {
		t.Fatal(err)
	}
	other, err := db.Items().BeginTurn(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	good := NewItem{Origin: OriginOutput, Data: []byte(`{"type":"message"}`)}
	for name, tc := range map[string]struct {
		turn int64
		item NewItem
	}{
		"array":        {0, NewItem{Origin: OriginOutput, Data: []byte(`[1,2]`)}},
		"null":         {0, NewItem{Origin: OriginOutput, Data: []byte(`null`)}},
		"string":       {0, NewItem{Origin: OriginOutput, Data: []byte(`"x"`)}},
		"empty":        {0, NewItem{Origin: OriginOutput}},
		"truncated":    {0, NewItem{Origin: OriginOutput, Data: []byte(`{"type":"mess`)}},
		"trailing":     {0, NewItem{Origin: OriginOutput, Data: []byte(`{"a":1} {"b":2}`)}},
		"bad origin":   {0, NewItem{Origin: "model", Data: []byte(`{}`)}},
		"foreign turn": {other.ID, good},
		"unknown turn": {999, good},
	} {
		_, err := db.Items().Append(ctx, "s1", tc.turn, []NewItem{good, tc.item, good})
		if err == nil {
			t.Errorf("%s: Items.Append accepted it", name)
		}
	}
	items, err := db.Items().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Errorf("invalid batches wrote %d items, want none", len(items)-1)
	}
	if _, err := db.Items().Append(ctx, "nope", 0, []NewItem{good}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
	if _, err := db.Items().Append(ctx, "s1", 999, []NewItem{good}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown turn: %v, want ErrNotFound", err)
	}
}

// TestAppendItemsRollsBackMidBatch fails the second insert inside SQLite,
// after the first has been written, to show the batch is one transaction.
func TestAppendItemsRollsBackMidBatch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	if _, err := db.wconn.ExecContext(context.Background(), `
		CREATE TEMP TRIGGER boom BEFORE INSERT ON items
		WHEN NEW.type = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	_, err := db.Items().Append(ctx, "s1", 0, []NewItem{
		{Origin: OriginInput, Data: []byte(`{"type":"message"}`)},
		{Origin: OriginOutput, Data: []byte(`{"type":"boom"}`)},
	})
	if err == nil {
		t.Fatal("Items.Append succeeded through the failing trigger")
	}
	items, err := db.Items().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 0 {
		t.Errorf("%d items survived a failed batch", len(items))
	}
	// The next append starts again at seq 1.
	got, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{}`)}})
	if err != nil || got[0].Seq != 1 {
		t.Errorf("append after rollback = %+v, %v", got, err)
	}
}

func TestItemDataByteExact(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	cases := []struct {
		data, typ string
	}{
		{" {\n\t\"type\" :  \"message\" ,\"content\":[ ]}\r\n", "message"},
		{`{"type":"message","content":"héllo 🌍 \u00e9 \"q\" \\ \/ \ud83c\udf0d"}`, "message"},
		{`{"b":1.50,"a":1e400,"type":"function_call","type2":"x"}`, "function_call"},
		{`{"TYPE":"upper","Type":"mixed"}`, ""},
		{`{"type":7}`, ""},
		{`{"type":"a","type":"b"}`, "b"},
		{`{"text":"line\nbreak\u0000nul","z":null,"y":[{"x":{}}]}`, ""},
		{`{"日本":"語","emoji":"👩‍💻","bidi":"‮"}`, ""},
	}
	var batch []NewItem
	for _, c := range cases {
		batch = append(batch, NewItem{Origin: OriginOutput, Data: json.RawMessage(c.data)})
	}
	if _, err := db.Items().Append(ctx, "s1", 0, batch); err != nil {
		t.Fatal(err)
	}
	items, err := db.Items().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(cases) {
		t.Fatalf("len(items) = %d, want %d", len(items), len(cases))
	}
	for i, c := range cases {
		if !bytes.Equal(items[i].Data, []byte(c.data)) {
			t.Errorf("item %d: data = %q, want %q", i, items[i].Data, c.data)
		}
		if items[i].Type != c.typ {
			t.Errorf("item %d: type = %q, want %q", i, items[i].Type, c.typ)
		}
	}
}

// TestConcurrentAppends runs 8 writers on 4 sessions with readers alongside:
// every append must succeed (no "database is locked") and each session's
// sequence must come out 1..n with every item exactly once.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	const sessions, writers, batches = 4, 8, 40
	for s := range sessions {
		newSession(t, db, fmt.Sprintf("/src/w%d", s%2), fmt.Sprintf("s%d", s))
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for w := range writers {
		sid := fmt.Sprintf("s%d", w%sessions)
		wg.Go(func() {
			turn, err := db.Items().BeginTurn(ctx, sid)
			if err != nil {
				errs <- err
				return
			}
			for b := range batches {
				batch := make([]NewItem, 1+b%3)
				for i := range batch {
					batch[i] = NewItem{Origin: OriginOutput, Data: fmt.Appendf(nil, `{"type":"t","w":%d,"b":%d,"i":%d}`, w, b, i)}
				}
				got, err := db.Items().Append(ctx, sid, turn.ID, batch)
				if err != nil {
					errs <- err
					return
				}
				for i := 1; i < len(got); i++ {
					if got[i].Seq != got[i-1].Seq+1 {
						errs <- fmt.Errorf("batch not contiguous: %d after %d", got[i].Seq, got[i-1].Seq)
						return
					}
				}
			}
			if err := db.Items().EndTurn(ctx, turn.ID, TurnCompleted, "end_turn", ""); err != nil {
				errs <- err
			}
		})
		// A reader per writer, to exercise the pool against the writer.
		wg.Go(func() {
			for range batches {
				if _, err := db.Items().List(ctx, sid); err != nil {
					errs <- err
					return
				}
				if _, err := db.Sessions(ctx, "", 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	perWriter := 0
	for b := range batches {
		perWriter += 1 + b%3
	}
	for s := range sessions {
		items, err := db.Items().List(ctx, fmt.Sprintf("s%d", s))
		if err != nil {
			t.Fatal(err)
		}
		if want := perWriter * writers / sessions; len(items) != want {
			t.Errorf("s%d: %d items, want %d", s, len(items), want)
		}
		seen := make(map[string]bool)
		for i, it := range items {
			if it.Seq != int64(i+1) {
				t.Fatalf("s%d: items[%d].Seq = %d", s, i, it.Seq)
			}
			if seen[string(it.Data)] {
				t.Errorf("s%d: duplicate item %s", s, it.Data)
			}
			seen[string(it.Data)] = true
		}
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// BenchmarkAppendItem measures one item per transaction, as the daemon
// commits each item before sending the request that carries it.
func BenchmarkAppendItem(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	newSession(b, db, "/src/app", "s1")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		b.Fatal(err)
	}
	item := []NewItem{{Origin: OriginOutput, Data: json.RawMessage(`{"type":"function_call_output","call_id":"call_abc123","output":"` +
		string(bytes.Repeat([]byte("x"), 400)) + `"}`)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Items().Append(ctx, "s1", turn.ID, item); err != nil {
			b.Fatal(err)
		}
	}
}

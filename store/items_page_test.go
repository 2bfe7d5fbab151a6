package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Items.Page walks a transcript in pages: each page starts after the last
// Seq of the one before, holds at most limit items of that session only,
// and the pages together are the whole transcript in order.
func TestItemsPage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	var batch []NewItem
	for i := range 12 {
		batch = append(batch, NewItem{Origin: OriginInput, Data: fmt.Appendf(nil, `{"type":"message","n":%d}`, i)})
	}
	if _, err := db.Items().Append(ctx, "s1", 0, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Items().Append(ctx, "s2", 0, batch[:3]); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var seqs []int64
	after := int64(0)
	for {
		page, err := db.Items().Page(ctx, "s1", after, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		sizes = append(sizes, len(page))
		for _, it := range page {
			if it.SessionID != "s1" || string(it.Data) != string(batch[it.Seq-1].Data) {
				t.Errorf("item %d = %+v", it.Seq, it)
			}
			seqs = append(seqs, it.Seq)
		}
		after = page[len(page)-1].Seq
	}
	if fmt.Sprint(sizes) != "[5 5 2]" {
		t.Errorf("page sizes = %v, want [5 5 2]", sizes)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs = %v, want 1..12", seqs)
		}
	}
	if all, err := db.Items().Page(ctx, "s1", 10, -1); err != nil || len(all) != 2 || all[0].Seq != 11 {
		t.Errorf("Items.Page(after 10, no limit) = %d items, %v", len(all), err)
	}
	if none, err := db.Items().Page(ctx, "missing", 0, 5); err != nil || len(none) != 0 {
		t.Errorf("Items.Page of an unknown session = %v, %v", none, err)
	}
}

// An item's view is kept beside it, read back with it, absent when none was
// given, and refused when it is not JSON.
func TestItemViews(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	view := `{"title":"Edit a.go","diff":{"path":"a.go","old":"x","new":"y"}}`
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{
		{Origin: OriginInput, Data: []byte(`{"type":"function_call_output","call_id":"c","output":"ok"}`), View: []byte(view)},
		{Origin: OriginInput, Data: []byte(`{"type":"message"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	items, err := db.Items().Page(ctx, "s1", 0, 10)
	if err != nil || len(items) != 2 {
		t.Fatalf("Items.Page: %d items, %v", len(items), err)
	}
	if string(items[0].View) != view || items[1].View != nil {
		t.Errorf("views read back: %q, %q", items[0].View, items[1].View)
	}
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{}`), View: []byte(`{oops`)}}); err == nil {
		t.Error("a view that is not JSON was stored")
	}
}

// Compactions are kept in order; the last one is the session's view.
func TestCompactions(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	if _, err := db.Branches().LastCompaction(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LastCompaction of a session never compacted: %v", err)
	}
	for i, through := range []int64{10, 25} {
		if _, err := db.Branches().AddCompaction(ctx, Compaction{SessionID: "s1", ThroughSeq: through, Summary: fmt.Sprintf("summary %d", i), Reason: "window"}); err != nil {
			t.Fatal(err)
		}
	}
	last, err := db.Branches().LastCompaction(ctx, "s1")
	if err != nil || last.ThroughSeq != 25 || last.Summary != "summary 1" {
		t.Fatalf("LastCompaction: %+v %v", last, err)
	}
	all, err := db.Branches().Compactions(ctx, "s1")
	if err != nil || len(all) != 2 || all[0].ThroughSeq != 10 {
		t.Fatalf("Compactions: %+v %v", all, err)
	}
	if _, err := db.Branches().AddCompaction(ctx, Compaction{SessionID: "nope", Summary: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a compaction of no session: %v", err)
	}
}

// A compaction by the API stores its output as items after the session's
// last one and the compaction through that last one, together; a batch the
// store refuses leaves neither.
func TestCompactionItems(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"message","role":"user","content":"a"}`)},
		{Origin: OriginOutput, Data: []byte(`{"type":"message","role":"assistant","content":"b"}`)}}); err != nil {
		t.Fatal(err)
	}
	out := []NewItem{{Origin: OriginOutput, Data: []byte(`{"type":"message","role":"user","content":"a"}`), View: []byte(`{"compaction":true}`)},
		{Origin: OriginOutput, Data: []byte(`{"type":"compaction","id":"cmp_1","encrypted_content":"sealed"}`), View: []byte(`{"compaction":true}`)}}
	c, items, err := db.Branches().AddCompactionItems(ctx, Compaction{SessionID: "s1", ResponseID: "resp_1", Reason: "window"}, 0, out)
	if err != nil || c.ThroughSeq != 2 || c.ID == 0 || len(items) != 2 || items[0].Seq != 3 || items[1].Type != "compaction" {
		t.Fatalf("AddCompactionItems: %+v %+v %v", c, items, err)
	}
	last, err := db.Branches().LastCompaction(ctx, "s1")
	if err != nil || last.ThroughSeq != 2 || last.Summary != "" || last.ResponseID != "resp_1" {
		t.Fatalf("LastCompaction: %+v %v", last, err)
	}
	if _, _, err := db.Branches().AddCompactionItems(ctx, Compaction{SessionID: "s1"}, 0, []NewItem{{Origin: OriginOutput, Data: []byte(`not json`)}}); err == nil {
		t.Fatal("a compaction with an item that is not JSON was stored")
	}
	if all, _ := db.Branches().Compactions(ctx, "s1"); len(all) != 1 {
		t.Fatalf("%d compactions after a refused one", len(all))
	}
	if items, _ := db.Items().List(ctx, "s1"); len(items) != 4 {
		t.Fatalf("%d items after a refused compaction", len(items))
	}
}

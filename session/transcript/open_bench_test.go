package transcript_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hearthd/hearth/session/transcript"
	"github.com/hearthd/hearth/store"
)

// BenchmarkOpen opens a transcript of 10,000 items as session/load does
// (the items read already): no replay form is made, so it stays a walk
// over the items and two small queries.
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(filepath.Join(b.TempDir(), "hearth.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateSession(ctx, store.Session{ID: "s", Root: "/w"}); err != nil {
		b.Fatal(err)
	}
	for range 10 {
		batch := make([]store.NewItem, 1000)
		for i := range batch {
			batch[i] = store.NewItem{Origin: store.OriginOutput, Data: json.RawMessage(fmt.Sprintf(
				`{"id":"fc_%d","type":"function_call","status":"completed","call_id":"c%d","name":"read_file","arguments":"{}"}`, i, i))}
		}
		if _, err := db.Items().Append(ctx, "s", 0, batch); err != nil {
			b.Fatal(err)
		}
	}
	items, err := db.Items().List(ctx, "s")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := transcript.Open(ctx, transcript.Options{DB: db, ID: "s", Items: items}); err != nil {
			b.Fatal(err)
		}
	}
}

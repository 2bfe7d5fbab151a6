package store

import (
	"context"
	"maps"
	"testing"
)

func TestReadSet(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	for _, r := range []struct{ session, path, hash string }{
		{"s1", "main.go", "h1"},
		{"s1", "go.mod", "h2"},
		{"s1", "main.go", "h3"}, // the model saw a newer version
		{"s2", "main.go", "other"},
	} {
		if err := db.SetRead(ctx, r.session, r.path, r.hash); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ReadSet(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"main.go": "h3", "go.mod": "h2"}; !maps.Equal(got, want) {
		t.Errorf("ReadSet(s1) = %v, want %v", got, want)
	}
	if got, err := db.ReadSet(ctx, "none"); err != nil || len(got) != 0 {
		t.Errorf("ReadSet(unknown) = %v, %v; want empty", got, err)
	}
}

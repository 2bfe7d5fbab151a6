package watch

import (
	"context"
	"testing"
	"time"
)

func TestCollapse(t *testing.T) {
	c := func(op ChangeOp, path string) Change { return Change{Op: op, Path: path} }
	mv := func(old, path string) Change { return Change{Op: Renamed, Old: old, Path: path} }
	for _, tc := range []struct {
		name string
		raw  []Change
		want string
	}{
		{"created then modified", []Change{c(Created, "a"), c(Modified, "a")}, "created a"},
		{"created then deleted", []Change{c(Created, "a"), c(Deleted, "a")}, ""},
		{"modified then deleted", []Change{c(Modified, "a"), c(Modified, "a"), c(Deleted, "a")}, "deleted a"},
		{"deleted then created", []Change{c(Deleted, "a"), c(Created, "a")}, "modified a"},
		{"rename chain", []Change{mv("a", "b"), mv("b", "c")}, "renamed a → c"},
		{"renamed then modified", []Change{mv("a", "b"), c(Modified, "b")}, "renamed a → b"},
		{"renamed then deleted", []Change{mv("a", "b"), c(Deleted, "b")}, "deleted a"},
		{"created then renamed", []Change{c(Created, "a"), mv("a", "b")}, "created b"},
		{"renamed back", []Change{mv("a", "b"), mv("b", "a")}, "modified a"},
		{"modified then renamed", []Change{c(Modified, "a"), mv("a", "b")}, "renamed a → b"},
		{"renamed, then a new file at the old path", []Change{mv("a", "b"), c(Created, "a")}, "created a\nrenamed a → b"},
		{"atomic save across batches", []Change{c(Created, "t"), c(Deleted, "t"), c(Modified, "f")}, "modified f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.raw {
				tc.raw[i].Seq = uint64(i + 1)
			}
			if got := formatChanges(collapse(tc.raw)); got != tc.want {
				t.Errorf("collapse = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJournalCompaction(t *testing.T) {
	j := newJournal(8)
	for range 5 {
		j.append([]Change{{Op: Created, Path: "x"}})
	}
	if raw, next, overflow := j.since(0); len(raw) != 5 || next != 6 || overflow {
		t.Fatalf("since(0) = %d changes, next %d, overflow %v", len(raw), next, overflow)
	}
	for range 5 {
		j.append([]Change{{Op: Modified, Path: "y"}})
	}
	// The ninth append went past 8 and compacted to the newest 6 (4..9);
	// the tenth made it 7.
	raw, next, overflow := j.since(2)
	if !overflow || next != 11 || len(raw) != 7 || raw[0].Seq != 4 {
		t.Fatalf("since(2) after compaction = %d changes from %d, next %d, overflow %v", len(raw), raw[0].Seq, next, overflow)
	}
	if raw, _, overflow := j.since(7); overflow || len(raw) != 4 || raw[0].Seq != 7 {
		t.Errorf("since(7) = %d changes, overflow %v", len(raw), overflow)
	}
	if raw, next, overflow := j.since(99); raw != nil || next != 11 || overflow {
		t.Errorf("since(99) = %v %d %v", raw, next, overflow)
	}
}

func TestJournalWait(t *testing.T) {
	j := newJournal(8)
	stopped := make(chan struct{})
	got := make(chan uint64, 1)
	go func() {
		next, _ := j.wait(context.Background(), 1, stopped)
		got <- next
	}()
	j.append([]Change{{Op: Created, Path: "a"}})
	select {
	case next := <-got:
		if next != 2 {
			t.Errorf("wait returned %d, want 2", next)
		}
	case <-time.After(testTimeout):
		t.Fatal("wait did not return after an append")
	}
	close(stopped)
	if _, err := j.wait(context.Background(), 5, stopped); err != ErrClosed {
		t.Errorf("wait after stop: %v", err)
	}
}

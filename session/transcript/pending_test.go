package transcript_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearthd/hearth/store"
)

// Steering input recorded as pending and committed, by any of the ways it
// is committed (a successor, the server's hold, the queue), is done with: a
// transcript opened later finds nothing to settle, and the view holds each
// item once. One never committed (the daemon died) is settled once, at the
// end of its turn, and only once.
func TestPendingSteeringSettlesOnce(t *testing.T) {
	h := newHarness(t)
	turn := h.begin()
	h.response(turn, "answer")
	for _, name := range []string{"succ", "held", "queued", "lost"} {
		if err := h.tr.Steering().Pend(h.ctx, turn, raw(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tr.CommitSteered(h.ctx, store.Request{TurnID: turn, Kind: store.KindIncremental}, raw("succ")); err != nil {
		t.Fatal(err)
	}
	h.tr.StageSteered(raw("held"))
	h.tr.Steering().Steer(item("queued"), nil)
	h.request(turn)

	names := func(tr interface{ Input() []json.RawMessage }) string {
		var out []string
		for _, it := range tr.Input() {
			var v struct {
				N string `json:"n"`
			}
			_ = json.Unmarshal(it, &v)
			out = append(out, v.N)
		}
		return strings.Join(out, ",")
	}
	if got := names(h.tr); got != "init,answer,succ,held,queued" {
		t.Fatalf("live view %s", got)
	}
	again := h.open("s")
	n, err := again.Steering().Settle(h.ctx)
	if err != nil || n != 1 {
		t.Fatalf("settled %d (%v); want the one never committed", n, err)
	}
	if got := names(again); got != "init,answer,succ,held,queued,lost" {
		t.Fatalf("view after settling %s", got)
	}
	third := h.open("s")
	if n, err := third.Steering().Settle(h.ctx); err != nil || n != 0 {
		t.Fatalf("settled %d again (%v)", n, err)
	}
	if got := names(third); got != "init,answer,succ,held,queued,lost" {
		t.Fatalf("view reopened %s", got)
	}
}

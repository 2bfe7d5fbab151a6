package transcript

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hearthd/hearth/store"
)

// The ledger's invariant, step by step: what waits on staged items is told
// only once they are stored (or dropped), a staged response leads, and a
// commit that takes a batch leaves what was staged after it for the next.
func TestLedger(t *testing.T) {
	type step struct {
		op    string // stage, response, take, stored, commit, drop
		items string // comma-separated item names
		seen  int    // read-set updates staged with the items
		wait  string // the waiter's name, told with the items
		ok    bool   // response: staged
	}
	cases := []struct {
		name       string
		steps      []step
		committed  string
		staged     string
		seen       int
		end        bool
		told       string // name=stored, in the order told
		unanswered bool
	}{
		{name: "a read's output waits for its commit",
			steps:     []step{{op: "stage", items: "out1", seen: 1, wait: "w1"}, {op: "commit"}},
			committed: "out1", told: "w1=true"},
		{name: "nothing is told before the commit",
			steps:  []step{{op: "stage", items: "out1", seen: 1, wait: "w1"}},
			staged: "out1", seen: 1},
		{name: "a response that only calls reads leads its outputs",
			steps:     []step{{op: "response", items: "call1,call2", ok: true}, {op: "stage", items: "out1", wait: "w1"}, {op: "stage", items: "out2", wait: "w2"}, {op: "commit"}},
			committed: "call1,call2,out1,out2", told: "w1=true,w2=true"},
		{name: "a response is not staged behind items",
			steps:  []step{{op: "stage", items: "user"}, {op: "response", items: "call1", ok: false}},
			staged: "user"},
		{name: "nor behind another response",
			steps:  []step{{op: "response", items: "call1", ok: true}, {op: "response", items: "call2", ok: false}},
			staged: "call1", end: true},
		{name: "a failed commit tells the waiters and marks the calls for repair",
			steps:      []step{{op: "response", items: "call1", ok: true}, {op: "stage", items: "out1", seen: 1, wait: "w1"}, {op: "drop"}},
			told:       "w1=false",
			unanswered: true},
		{name: "what is staged after a batch is taken waits for the next commit",
			steps:     []step{{op: "stage", items: "out1", wait: "w1"}, {op: "take"}, {op: "stage", items: "out2", seen: 1, wait: "w2"}, {op: "stored"}},
			committed: "out1", staged: "out2", seen: 1, told: "w1=true"},
		{name: "and is told with it",
			steps:     []step{{op: "stage", items: "out1", wait: "w1"}, {op: "take"}, {op: "stage", items: "out2", wait: "w2"}, {op: "stored"}, {op: "commit"}},
			committed: "out1,out2", told: "w1=true,w2=true"},
		{name: "read-set updates alone are committed too",
			steps: []step{{op: "stage", seen: 2}, {op: "commit"}}},
	}
	item := func(name string) store.NewItem { return store.NewItem{Data: json.RawMessage(`"` + name + `"`)} }
	names := func(data []json.RawMessage) string {
		var out []string
		for _, d := range data {
			out = append(out, strings.Trim(string(d), `"`))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l ledger
			var told []string
			var taken store.Staged
			for _, s := range tc.steps {
				var its []store.NewItem
				if s.items != "" {
					for _, n := range strings.Split(s.items, ",") {
						its = append(its, item(n))
					}
				}
				switch s.op {
				case "stage":
					var done func(bool)
					if s.wait != "" {
						done = func(stored bool) { told = append(told, fmt.Sprintf("%s=%v", s.wait, stored)) }
					}
					l.stage(its, make([]store.SeenWrite, s.seen), done)
				case "response":
					if got := l.stageResponse(&store.Completion{ID: 1}, its); got != s.ok {
						t.Fatalf("stageResponse = %v, want %v", got, s.ok)
					}
				case "take":
					taken = l.batch()
				case "stored":
					l.stored(taken)()
				case "commit":
					l.stored(l.batch())()
				case "drop":
					tell, lostEnd := l.dropped()
					tell()
					if want := slices.ContainsFunc(tc.steps, func(s step) bool { return s.op == "response" && s.ok }); lostEnd != want {
						t.Errorf("dropped: lost end %v, want %v", lostEnd, want)
					}
				}
			}
			var staged []json.RawMessage
			for _, it := range l.staged {
				staged = append(staged, it.Data)
			}
			if got := names(l.committed); got != tc.committed {
				t.Errorf("committed %q, want %q", got, tc.committed)
			}
			if got := names(staged); got != tc.staged {
				t.Errorf("staged %q, want %q", got, tc.staged)
			}
			if len(l.seen) != tc.seen || (l.end != nil) != tc.end || l.unanswered != tc.unanswered {
				t.Errorf("seen %d, end %v, unanswered %v; want %d, %v, %v", len(l.seen), l.end != nil, l.unanswered, tc.seen, tc.end, tc.unanswered)
			}
			if got := strings.Join(told, ","); got != tc.told {
				t.Errorf("told %q, want %q", got, tc.told)
			}
			if l.empty() != (tc.staged == "" && tc.seen == 0 && !tc.end) {
				t.Errorf("empty() = %v", l.empty())
			}
		})
	}
}

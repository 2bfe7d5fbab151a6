package transcript_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/transcript"
	"github.com/hearthd/hearth/store"
)

// harness is one session's transcript on a real store in a temp dir.
type harness struct {
	t    *testing.T
	ctx  context.Context
	db   *store.DB
	tr   *transcript.Transcript
	told []string // what waiters heard: name=stored
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := &harness{t: t, ctx: context.Background(), db: db}
	h.session("s")
	h.tr = h.open("s")
	if err := h.tr.Initialize(h.ctx, []json.RawMessage{item("init")}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) session(id string) {
	h.t.Helper()
	if err := h.db.CreateSession(h.ctx, store.Session{ID: id, Root: "/w"}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) open(id string) *transcript.Transcript {
	h.t.Helper()
	tr, err := transcript.Open(h.ctx, transcript.Options{DB: h.db, ID: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return tr
}

// turn runs a turn that commits names, as a turn of tr, and returns its id.
func (h *harness) turn(tr *transcript.Transcript, names ...string) int64 {
	h.t.Helper()
	id, err := tr.Turns().BeginTurn(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := tr.Commit(h.ctx, id, newItems(names...)); err != nil {
		h.t.Fatal(err)
	}
	if err := tr.Turns().EndTurn(h.ctx, id, store.TurnCompleted, "end_turn", ""); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// begin starts a turn and leaves it running.
func (h *harness) begin() int64 {
	h.t.Helper()
	id, err := h.tr.Turns().BeginTurn(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	h.tr.StartTurn()
	return id
}

func (h *harness) waiter(name string) func(bool) {
	return func(stored bool) { h.told = append(h.told, fmt.Sprintf("%s=%v", name, stored)) }
}

// request sends what is staged: its row and batch are committed, what
// waited is told.
func (h *harness) request(turnID int64) {
	h.t.Helper()
	_, b := h.tr.Next()
	_, tell, err := h.tr.CommitRequest(h.ctx, store.Request{TurnID: turnID, Kind: store.KindFull}, b)
	if err != nil {
		h.t.Fatal(err)
	}
	tell()
}

// response commits a response of names to a request of turnID.
func (h *harness) response(turnID int64, names ...string) {
	h.t.Helper()
	reqID, tell, err := h.tr.CommitRequest(h.ctx, store.Request{TurnID: turnID, Kind: store.KindFull}, store.Staged{})
	if err != nil {
		h.t.Fatal(err)
	}
	tell()
	end := &store.Completion{ID: reqID, ResponseID: "resp", Status: store.RequestCompleted}
	if _, err := h.tr.CommitResponse(h.ctx, turnID, end, raw(names...)); err != nil {
		h.t.Fatal(err)
	}
}

// item is a test item: a message named name, a call ("call:id") or its
// output ("out:id").
func item(name string) json.RawMessage {
	switch {
	case strings.HasPrefix(name, "call:"):
		return json.RawMessage(fmt.Sprintf(`{"type":"function_call","call_id":%q,"name":"read_file","arguments":"{}"}`, name[5:]))
	case strings.HasPrefix(name, "out:"):
		return json.RawMessage(fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"ok"}`, name[4:]))
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"message","role":"user","n":%q}`, name))
}

func raw(names ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range names {
		out = append(out, item(n))
	}
	return out
}

func newItems(names ...string) []store.NewItem {
	var out []store.NewItem
	for _, n := range names {
		out = append(out, store.NewItem{Origin: store.OriginInput, Data: item(n)})
	}
	return out
}

// names reads items back as the names item gave them; the summary of a
// compaction reads "summary", a repaired output "out:id!".
func names(items []json.RawMessage) string {
	var out []string
	for _, it := range items {
		var m struct {
			Type, N, Output string
			CallID          string `json:"call_id"`
			Content         json.RawMessage
		}
		_ = json.Unmarshal(it, &m)
		switch {
		case m.Type == "function_call":
			out = append(out, "call:"+m.CallID)
		case m.Type == "function_call_output" && m.Output != "ok":
			out = append(out, "out:"+m.CallID+"!")
		case m.Type == "function_call_output":
			out = append(out, "out:"+m.CallID)
		case m.N != "":
			out = append(out, m.N)
		case m.Content != nil:
			out = append(out, "summary")
		default:
			out = append(out, m.Type)
		}
	}
	return strings.Join(out, ",")
}

func repaired(call transcript.Call) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"interrupted"}`, call.CallID))
}

// Every transition of a transcript, on a real store: the view it leaves,
// the same view reopened from the store (what survives a restart), what
// the store holds, what waited on staged items heard, and whether what the
// server held of the old view is gone (the epoch moved).
func TestTransitions(t *testing.T) {
	cases := []struct {
		name string
		// run drives h and returns the transcript to check (h.tr, or a
		// fork) and the error of the transition under test.
		run    func(h *harness) (*transcript.Transcript, error)
		err    error  // the transition's error (errors.Is)
		view   string // the model's view after it
		stored int    // items the session's store holds (0: as many as the view)
		told   string
		moved  bool // the epoch moved: the server's chain is gone
	}{
		{name: "commit: staged outputs are stored, then told",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.tr.Stage(newItems("u1"), nil, nil)
				h.tr.Stage(newItems("out:x"), []store.SeenWrite{{Path: "a.go", Seen: store.Seen{Hash: "h"}}}, h.waiter("w1"))
				return h.tr, h.tr.Flush(h.ctx, id)
			},
			view: "init,u1,out:x", told: "w1=true"},
		{name: "a request commits what is staged with its row",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.response(id, "call:a")
				h.tr.Stage(newItems("out:a"), nil, h.waiter("w1"))
				full, _ := h.tr.Next()
				if got := names(full); got != "init,call:a,out:a" {
					h.t.Errorf("the request's input is %s", got)
				}
				h.request(id)
				return h.tr, nil
			},
			view: "init,call:a,out:a", told: "w1=true"},
		{name: "interrupt: a cancelled turn's staged response and outputs are stored at its end",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				if !h.tr.StageResponse(&store.Completion{ID: h.requestRow(id), Status: store.RequestCompleted}, raw("call:a", "call:b")) {
					h.t.Fatal("StageResponse refused")
				}
				h.tr.Stage(newItems("out:a"), nil, h.waiter("a"))
				h.tr.Stage(newItems("out:b"), nil, h.waiter("b"))
				return h.tr, h.tr.Flush(h.ctx, id) // the turn's end
			},
			view: "init,call:a,call:b,out:a,out:b", told: "a=true,b=true"},
		{name: "a failed commit drops what is staged, tells so, and the next turn mends the calls",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.response(id, "call:a")
				h.tr.Stage(newItems("out:a"), nil, h.waiter("w1"))
				if err := h.tr.Flush(h.ctx, 999); err == nil { // no such turn: the store refuses
					h.t.Fatal("Flush into a missing turn succeeded")
				}
				return h.tr, h.tr.Mend(h.ctx, id, repaired)
			},
			view: "init,call:a,out:a!", told: "w1=false"},
		{name: "a lost response's end moves the epoch",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.tr.StageResponse(&store.Completion{ID: h.requestRow(id), Status: store.RequestCompleted}, raw("call:a"))
				err := h.tr.Flush(h.ctx, 999)
				if err == nil {
					h.t.Fatal("Flush into a missing turn succeeded")
				}
				return h.tr, nil
			},
			view: "init", moved: true},
		{name: "compaction by a summary keeps the initial items and the running turn's",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				id := h.begin()
				h.tr.Stage(newItems("u2"), nil, nil)
				if err := h.tr.Flush(h.ctx, id); err != nil {
					return nil, err
				}
				return h.tr, h.tr.Compacted(h.ctx, "so far", "resp", "test", 0)
			},
			view: "init,summary,u2", stored: 4, moved: true},
		{name: "compaction by the API: its output is the view after the initial items",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				id := h.begin()
				_, err := h.tr.CompactedByServer(h.ctx, id, "resp", "test", raw("c1", "c2"))
				return h.tr, err
			},
			view: "init,c1,c2", stored: 5, moved: true},
		{name: "steering: an item sent while a response runs follows it and its outputs",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.tr.Stage(newItems("u1"), nil, nil)
				h.request(id)                                     // the response is running
				h.tr.Steering().Steer(item("s1"), h.waiter("s1")) // the user steers
				if !h.tr.Steering().Steered() {
					h.t.Error("nothing steered")
				}
				h.response(id, "call:a")
				h.tr.Stage(newItems("out:a"), nil, h.waiter("a"))
				full, _ := h.tr.Next()
				if got := names(full); got != "init,u1,call:a,out:a,s1" {
					h.t.Errorf("the successor's input is %s", got)
				}
				h.request(id)
				return h.tr, nil
			},
			view: "init,u1,call:a,out:a,s1", told: "a=true,s1=true"},
		{name: "steering held for a continuation leads the tool outputs, as the server prepends it",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.tr.Stage(newItems("u1"), nil, nil)
				h.request(id)
				h.response(id, "call:a")
				h.tr.Stage(newItems("out:a"), nil, h.waiter("a"))
				h.tr.StageSteered(raw("s1")) // response.steer.pending
				full, _ := h.tr.Next()
				if got := names(full); got != "init,u1,call:a,s1,out:a" {
					h.t.Errorf("the continuation's input is %s", got)
				}
				h.request(id)
				return h.tr, nil
			},
			view: "init,u1,call:a,s1,out:a", told: "a=true"},
		{name: "steering committed by an automatic successor follows the steered answer",
			run: func(h *harness) (*transcript.Transcript, error) {
				id := h.begin()
				h.tr.Stage(newItems("u1"), nil, nil)
				h.request(id)
				h.response(id, "partial")
				if _, err := h.tr.CommitSteered(h.ctx, store.Request{TurnID: id, Kind: store.KindIncremental, Status: "sent"}, raw("s1")); err != nil {
					return nil, err
				}
				h.response(id, "answer")
				return h.tr, nil
			},
			view: "init,u1,partial,s1,answer"},
		{name: "rewind to turn 2: later items stay stored, out of the view",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				t2 := h.turn(h.tr, "u2", "a2")
				h.turn(h.tr, "u3", "a3")
				return h.tr, h.tr.Rewind(h.ctx, t2)
			},
			view: "init,u1,a1", stored: 7, moved: true},
		{name: "after a rewind the next turn follows the kept ones",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				t2 := h.turn(h.tr, "u2", "a2")
				if err := h.tr.Rewind(h.ctx, t2); err != nil {
					return nil, err
				}
				h.turn(h.tr, "u3", "a3")
				return h.tr, nil
			},
			view: "init,u1,a1,u3,a3", stored: 7, moved: true},
		{name: "a rewind into what a compaction replaced is refused",
			run: func(h *harness) (*transcript.Transcript, error) {
				t1 := h.turn(h.tr, "u1", "a1")
				h.turn(h.tr, "u2", "a2")
				h.tr.StartTurn()
				if err := h.tr.Compacted(h.ctx, "so far", "resp", "test", 0); err != nil {
					return nil, err
				}
				return h.tr, h.tr.Rewind(h.ctx, t1)
			},
			err: transcript.ErrCompacted, view: "init,summary", stored: 5, moved: true},
		{name: "a rewind while a turn runs is refused",
			run: func(h *harness) (*transcript.Transcript, error) {
				t1 := h.turn(h.tr, "u1")
				h.tr.Stage(newItems("out:x"), nil, nil)
				err := h.tr.Rewind(h.ctx, t1)
				if ferr := h.tr.Flush(h.ctx, t1); ferr != nil {
					return nil, ferr
				}
				return h.tr, err
			},
			err: transcript.ErrBusy, view: "init,u1,out:x"},
		{name: "fork at turn 2: a new session sharing the prefix",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				t2 := h.turn(h.tr, "u2", "a2")
				h.turn(h.tr, "u3", "a3")
				h.session("fork")
				f, err := h.tr.Fork(h.ctx, "fork", t2)
				if err != nil {
					return nil, err
				}
				h.turn(f, "f3") // the fork goes on its own way
				if got := names(h.tr.View().Items()); got != "init,u1,a1,u2,a2,u3,a3" {
					h.t.Errorf("the original's view is %s after the fork", got)
				}
				return f, nil
			},
			view: "init,u1,a1,u2,a2,f3"},
		{name: "a fork while a turn runs copies the turns that ended",
			run: func(h *harness) (*transcript.Transcript, error) {
				t1 := h.turn(h.tr, "u1", "a1")
				t2 := h.begin()
				if err := h.tr.Commit(h.ctx, t2, newItems("u2")); err != nil {
					return nil, err
				}
				h.tr.Stage(newItems("out:x"), nil, nil)
				h.session("fork")
				if _, err := h.tr.Fork(h.ctx, "fork", t2); !errors.Is(err, transcript.ErrBusy) {
					h.t.Errorf("a fork of the running turn: %v, want ErrBusy", err)
				}
				f, err := h.tr.Fork(h.ctx, "fork", t1)
				if ferr := h.tr.Flush(h.ctx, t2); ferr != nil {
					return nil, ferr
				}
				return f, err
			},
			view: "init,u1,a1"},
		{name: "a fork at turn 0 keeps the initial items",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				h.session("fork")
				return h.tr.Fork(h.ctx, "fork", 0)
			},
			view: "init"},
		{name: "a fork after a compaction keeps its view",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				h.tr.StartTurn()
				if err := h.tr.Compacted(h.ctx, "so far", "resp", "test", 0); err != nil {
					return nil, err
				}
				t2 := h.turn(h.tr, "u2", "a2")
				h.session("fork")
				return h.tr.Fork(h.ctx, "fork", t2)
			},
			view: "init,summary,u2,a2", stored: 5},
		{name: "a fork of a rewound transcript leaves the rewound items out",
			run: func(h *harness) (*transcript.Transcript, error) {
				h.turn(h.tr, "u1", "a1")
				t2 := h.turn(h.tr, "u2")
				if err := h.tr.Rewind(h.ctx, t2); err != nil {
					return nil, err
				}
				t3 := h.turn(h.tr, "u3")
				h.session("fork")
				return h.tr.Fork(h.ctx, "fork", t3)
			},
			view: "init,u1,a1,u3", stored: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			before := h.tr.View().Epoch()
			tr, err := tc.run(h)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got := names(tr.View().Items()); got != tc.view {
				t.Errorf("view %s, want %s", got, tc.view)
			}
			if got := names(tr.Input()); got != tc.view {
				t.Errorf("replay forms %s, want %s", got, tc.view)
			}
			if tr == h.tr && (h.tr.View().Epoch() != before) != tc.moved {
				t.Errorf("epoch moved %v, want %v", h.tr.View().Epoch() != before, tc.moved)
			}
			if got := strings.Join(h.told, ","); got != tc.told {
				t.Errorf("told %q, want %q", got, tc.told)
			}
			id := "s"
			if tr != h.tr {
				id = "fork"
			}
			if got := names(h.open(id).View().Items()); got != tc.view {
				t.Errorf("reopened view %s, want %s", got, tc.view)
			}
			stored, err := h.db.Items().List(h.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.stored
			if want == 0 {
				want = strings.Count(tc.view, ",") + 1
			}
			if len(stored) != want {
				t.Errorf("the store holds %d items, want %d", len(stored), want)
			}
		})
	}
}

// requestRow records a request of turnID and returns its id.
func (h *harness) requestRow(turnID int64) int64 {
	h.t.Helper()
	id, _, err := h.tr.CommitRequest(h.ctx, store.Request{TurnID: turnID, Kind: store.KindFull}, store.Staged{})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

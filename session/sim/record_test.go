package sim

import "testing"

func TestOnAnsweredReportsEachRequest(t *testing.T) {
	got := make(chan Received, 4)
	_, base := newSim(t, Options{OnAnswered: func(r Received) { got <- r }})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"generate": false, "input": "x"}))
	r := <-got
	if !r.Answered || r.Transport != "ws" || r.Generate == nil || *r.Generate || r.Outcome != r.ResponseID {
		t.Fatalf("reported %+v", r)
	}
}

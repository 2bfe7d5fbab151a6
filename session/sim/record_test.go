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

// OnReceived reports a request when it arrives, before it is answered.
func TestOnReceivedReportsEachRequestFirst(t *testing.T) {
	order := make(chan string, 4)
	_, base := newSim(t, Options{
		OnReceived: func(r Received) {
			if r.Answered {
				order <- "received answered"
				return
			}
			order <- "received " + r.Type
		},
		OnAnswered: func(Received) { order <- "answered" },
	})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"generate": false, "input": "x"}))
	if a, b := <-order, <-order; a != "received response.create" || b != "answered" {
		t.Fatalf("reported %q then %q", a, b)
	}
}

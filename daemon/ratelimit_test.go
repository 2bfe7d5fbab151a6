package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A 429 with a reset parks the turn: the user is told when it resumes, the
// request goes again by itself once the reset has passed, and the turn
// ends as if nothing happened. Over WebSocket the reset is the error
// event's "try again in"; over HTTP, the 429's x-ratelimit headers.
func TestRateLimitParksTurn(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(map[bool]string{false: "ws", true: "http"}[overHTTP], func(t *testing.T) {
			td := startDaemon(t, sim.Options{}, "")
			if overHTTP {
				td.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
			}
			e := td.connect()
			e.initialize()
			id := e.newSession(td.root)
			if !overHTTP {
				td.waitRequests(1) // the warm-up
			}
			td.sim.RateLimit(1, time.Second)
			if stop := e.prompt(id, "hello"); stop != acp.StopReasonEndTurn {
				t.Fatalf("stop %q", stop)
			}
			txt := agentText(e.updates())
			if !strings.Contains(txt, "rate limited; resuming at ") || !strings.HasSuffix(txt, "You said: hello") {
				t.Fatalf("the editor was shown %q", txt)
			}
			cs := td.sim.Received() // creates only: nothing steers here
			if len(cs) < 2 || cs[len(cs)-2].Outcome != "rate_limit_exceeded" {
				t.Fatalf("%d creates: %+v", len(cs), cs)
			}
			if gap := cs[len(cs)-1].At.Sub(cs[len(cs)-2].At); gap < 900*time.Millisecond {
				t.Fatalf("went again after %v, before the reset", gap)
			}
		})
	}
}

// session/cancel ends a parked turn at once, however far its reset.
func TestRateLimitParkCancelled(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	td.waitRequests(1)
	td.sim.RateLimit(1, time.Hour)
	done := e.promptAsync(id, "hello")
	e.waitFor("the parked notice", func(ups []acp.SessionUpdate) bool {
		return strings.Contains(agentText(ups), "rate limited; resuming at ")
	})
	if err := e.c.Notify(context.Background(), rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case stop := <-done:
		if stop != acp.StopReasonCancelled {
			t.Fatalf("stop %q", stop)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked turn did not end on session/cancel")
	}
}

// The rate-limit headers of every HTTP answer reach the user: in
// usage_update's _meta, in status, and as a notice once a limit is under
// a tenth left.
func TestRateLimitsShown(t *testing.T) {
	td := startDaemon(t, sim.Options{RateLimitRequests: 1}, "")
	td.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426}) // HTTP: headers on every answer
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if stop := e.prompt(id, "hello"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	if txt := agentText(e.updates()); !strings.Contains(txt, "rate limit is nearly reached: 0 of 1 requests left") {
		t.Fatalf("no notice of the used-up limit: %q", txt)
	}
	var meta *rpc.RateLimits
	for _, u := range e.updates() {
		if u.UsageUpdate != nil && u.UsageUpdate.Meta[rpc.MetaRateLimits] != nil {
			b, _ := json.Marshal(u.UsageUpdate.Meta[rpc.MetaRateLimits])
			meta = &rpc.RateLimits{}
			if err := json.Unmarshal(b, meta); err != nil {
				t.Fatal(err)
			}
		}
	}
	if meta == nil || meta.Requests == nil || meta.Requests.Limit != 1 || meta.Requests.Remaining != 0 || meta.Requests.Reset == nil ||
		meta.Tokens == nil || meta.Tokens.Limit != sim.DefaultRateLimitTokens {
		t.Fatalf("usage_update _meta %+v", meta)
	}
	var st rpc.Status
	e.must(rpc.MethodHearthStatus, nil, &st)
	if len(st.Workspaces) != 1 || st.Workspaces[0].RateLimits == nil || st.Workspaces[0].RateLimits.Requests.Remaining != 0 {
		t.Fatalf("status %+v", st.Workspaces)
	}
}

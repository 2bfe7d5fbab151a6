package session_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// orderSink records what a turn tells it, in order, whichever goroutine
// tells it (the text of a response streams from the connection's reader).
type orderSink struct {
	mu    sync.Mutex
	kinds []string // "thought", "text", "call", in order, runs collapsed
	texts int      // Text calls
	text  strings.Builder
}

func (s *orderSink) add(kind string) {
	if k := len(s.kinds); k == 0 || s.kinds[k-1] != kind {
		s.kinds = append(s.kinds, kind)
	}
}

func (s *orderSink) Text(d string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add("text")
	s.texts++
	s.text.WriteString(d)
}

func (s *orderSink) Thought(string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add("thought")
}

func (s *orderSink) ToolCall(session.ToolCall, string, *session.ToolResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add("call")
}

func (s *orderSink) Notice(string) {}

// A model streaming at its pace: the deltas reach the sink in batches (a
// few calls, not one per token), and the turn's story keeps its order —
// the first response's thoughts, its call, the second's thoughts, then
// the answer, whole.
func TestDeltasBatchedInOrder(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 2000}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	s := &orderSink{}
	if stop := prompt(t, c, `look sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"} sim:tokens=400`, s); stop != session.StopEndTurn {
		t.Fatalf("stop %s", stop)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := strings.Join(s.kinds, " "); got != "thought call thought text" {
		t.Errorf("the sink heard %q, want thoughts, the call, thoughts, the answer", got)
	}
	words := strings.Fields(s.text.String())
	if len(words) != 400 || words[0] != "tok0" || words[399] != "tok399" {
		t.Errorf("the answer arrived as %d words (%.40q…)", len(words), s.text.String())
	}
	if s.texts > 100 {
		t.Errorf("400 deltas took %d Text calls: not batched", s.texts)
	}
	t.Logf("400 deltas in %d Text calls", s.texts)
}

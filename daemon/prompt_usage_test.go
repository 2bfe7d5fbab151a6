package daemon

import (
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A prompt's answer carries the turn's token usage: the sums of what the
// API reported for the turn's requests (a tool call makes two), not the
// session's running total; a turn that asked no model (/undo) carries none.
func TestPromptAnswerCarriesTheTurnsUsage(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	turn := func(text string) acp.PromptResponse {
		t.Helper()
		var r acp.PromptResponse
		ed.must(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
		return r
	}
	first := turn("hello")
	if first.Usage == nil || first.Usage.InputTokens <= 0 || first.Usage.OutputTokens <= 0 {
		t.Fatalf("the first answer's usage: %+v", first.Usage)
	}
	if u := first.Usage; u.TotalTokens != u.InputTokens+u.OutputTokens || u.CachedReadTokens == nil || u.ThoughtTokens == nil {
		t.Fatalf("the first answer's usage does not add up: %+v", u)
	}
	second := turn("hello again")
	if second.Usage == nil || second.Usage.InputTokens <= 0 {
		t.Fatalf("the second answer's usage: %+v", second.Usage)
	}
	reqs, err := td.d.db.Requests().List(t.Context(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	var all int64
	for _, r := range reqs {
		all += r.Usage.Input
	}
	if got := int64(first.Usage.InputTokens + second.Usage.InputTokens); got > all {
		t.Fatalf("two turns' input %d is more than the session's %d: a total, not the turn's", got, all)
	}
	if int64(second.Usage.InputTokens) == all {
		t.Fatalf("the second turn's input %d is the session's whole input: a running total, not the turn's", all)
	}
	if r := turn("/undo"); r.Usage != nil {
		t.Fatalf("/undo asked no model but answered usage %+v", r.Usage)
	}
}

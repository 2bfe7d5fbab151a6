package daemon

import (
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// /init and /review are offered beside /compact (/review with an input
// hint), and go to the model as what they ask of it — a developer message
// before the user's words, as typed — in a request that chains on the
// last; session/load replays the words, not the instructions. A word that
// only begins like a command is a plain prompt.
func TestSlashInitAndReview(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	var review *acp.AvailableCommand
	for _, u := range ed.updates() {
		if u.AvailableCommandsUpdate != nil {
			for i, c := range u.AvailableCommandsUpdate.AvailableCommands {
				if c.Name == "review" {
					review = &u.AvailableCommandsUpdate.AvailableCommands[i]
				}
			}
		}
	}
	if !offered(ed.updates(), "init") || review == nil || review.Description == "" ||
		review.Input == nil || review.Input.Unstructured == nil || review.Input.Unstructured.Hint == "" {
		t.Fatalf("/init and /review (with a hint) not offered: review %+v", review)
	}

	for i, tc := range []struct{ prompt, want string }{
		{"/review the error paths", "The user ran /review: review the uncommitted changes"},
		{"/init", "The user ran /init: write an AGENTS.md"},
		{"/reviewer of the week", ""},
	} {
		ed.prompt(id, tc.prompt)
		recs := td.waitRequests(3 + i)
		r := recs[len(recs)-1]
		var cmds []string
		for _, text := range developerTexts(r.Input) {
			if strings.HasPrefix(text, "The user ran /") {
				cmds = append(cmds, text)
			}
		}
		switch {
		case r.PreviousResponseID == "":
			t.Errorf("%s: the request went in full", tc.prompt)
		case tc.want == "" && len(cmds) != 0:
			t.Errorf("%s: taken for a command: %q", tc.prompt, cmds)
		case tc.want != "" && (len(cmds) != 1 || !strings.HasPrefix(cmds[0], tc.want)):
			t.Errorf("%s: the command's instructions %q", tc.prompt, cmds)
		case !strings.Contains(string(r.Input[len(r.Input)-1]), `"text":"`+tc.prompt+`"`):
			t.Errorf("%s: the user's words are not the last item: %s", tc.prompt, r.Input[len(r.Input)-1])
		}
	}

	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	var said []string
	for _, u := range b.updates() {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			said = append(said, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if strings.Join(said, "|") != "hello|/review the error paths|/init|/reviewer of the week" {
		t.Errorf("session/load replays the user's words %q", said)
	}
}

package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// framed are the texts among a request's input that begin with open
// (environmentOpen, policyOpen).
func framed(r sim.Received, open string) []string {
	var out []string
	for _, t := range contextTexts(r.Input) {
		if strings.HasPrefix(t, open) {
			out = append(out, t)
		}
	}
	return out
}

// A session opened in a subdirectory of a git repository begins, after
// the guidance, with its permissions (a developer message), its AGENTS.md
// files and its environment (user messages in the framings the families
// learned): <environment_context> with cwd, shell, current_date and
// timezone, then hearth's own elements — in its warm-up.
func TestSessionBeginsWithEnvironment(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	os.Mkdir(filepath.Join(td.root, ".git"), 0o755)
	os.WriteFile(filepath.Join(td.root, "AGENTS.md"), []byte("root rules\n"), 0o644)
	ed := td.connect()
	ed.initialize()
	before := time.Now()
	ed.newSession(filepath.Join(td.root, "src"))
	warm := td.waitRequests(1)[0]
	after := time.Now()
	if guidanceOf(warm) == "" {
		t.Fatalf("the warm-up does not begin with the guidance")
	}
	texts := contextTexts(warm.Input[1:])
	if len(texts) != 3 || !strings.HasPrefix(texts[0], policyOpen+"\n") || !strings.HasPrefix(texts[1], agentsHeading) ||
		!strings.Contains(texts[1], "root rules") || !strings.HasPrefix(texts[2], environmentOpen+"\n") {
		t.Fatalf("the warm-up's context: %q", texts)
	}
	env := texts[2]
	for _, want := range []string{
		"  <cwd>" + filepath.Join(td.root, "src") + "</cwd>\n",
		"  <shell>" + filepath.Base(userShell()) + "</shell>\n",
		"  <timezone>",
		"  <workspace_root>" + td.root + "</workspace_root>\n",
		"\n" + environmentClose,
	} {
		if !strings.Contains(env, want) {
			t.Errorf("the environment lacks %q:\n%s", want, env)
		}
	}
	if !strings.Contains(env, "<current_date>"+before.Format("2006-01-02")+"</current_date>") &&
		!strings.Contains(env, "<current_date>"+after.Format("2006-01-02")+"</current_date>") {
		t.Errorf("the environment does not give today's date:\n%s", env)
	}
	for _, want := range []string{"Approval mode: `ask`.", "ask the user first", "Network: enabled.", "Validation: "} {
		if !strings.Contains(texts[0], want) {
			t.Errorf("the permissions lack %q:\n%s", want, texts[0])
		}
	}
	if !strings.HasSuffix(texts[0], "\n"+policyClose) {
		t.Errorf("the permissions are not closed:\n%s", texts[0])
	}
}

// A mode change reaches the model with the next prompt as one new
// permissions message and nothing else, before the user's message of a
// request still chained on the last; a prompt with nothing changed
// carries none; the day turning carries a new environment only; and a
// restart keeps track of what the model was told. A session/load shows
// none of it as the user's words.
func TestEnvironmentChangeIsIncremental(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, "again")
	recs := td.waitRequests(3)
	second := recs[2]
	if second.PreviousResponseID != recs[1].ResponseID || len(second.Input) != 2 {
		t.Fatalf("after set_mode: previous_response_id %q (want %q), %d items (want the permissions and the user's message)",
			second.PreviousResponseID, recs[1].ResponseID, len(second.Input))
	}
	notes := framed(second, policyOpen)
	if len(notes) != 1 || !strings.Contains(notes[0], "Approval mode: `full-auto`. Reads, edits, commands and MCP tools all run without asking") ||
		!strings.Contains(notes[0], "Validation: nothing asks first, so check proactively") {
		t.Fatalf("after set_mode: permissions %q", notes)
	}
	if !strings.Contains(notes[0], "Network: restricted") && !strings.Contains(notes[0], "Network: should be restricted") {
		t.Errorf("full-auto's commands have the network?\n%s", notes[0])
	}

	ed.prompt(id, "nothing changed")
	recs = td.waitRequests(4)
	if len(recs[3].Input) != 1 || recs[3].PreviousResponseID == "" {
		t.Errorf("a prompt with nothing changed carries %d items (previous %q)", len(recs[3].Input), recs[3].PreviousResponseID)
	}

	clock.Lock()
	clock.shift = 24 * time.Hour
	clock.Unlock()
	t.Cleanup(func() { clock.Lock(); clock.shift = 0; clock.Unlock() })
	ed.prompt(id, "a day later")
	recs = td.waitRequests(5)
	tomorrow := time.Now().Add(24 * time.Hour).Format("2006-01-02")
	if n := framed(recs[4], environmentOpen); len(n) != 1 || !strings.Contains(n[0], "<current_date>"+tomorrow+"</current_date>") ||
		len(recs[4].Input) != 2 || recs[4].PreviousResponseID == "" {
		t.Errorf("the day turned: environments %q, %d items (previous %q)", n, len(recs[4].Input), recs[4].PreviousResponseID)
	}

	n0 := len(td.sim.Received())
	td.d.Close()
	td.restart()
	ed = td.connect()
	ed.initialize()
	ed.prompt(id, "after a restart")
	// The reopened session re-warms in full, then chains; what the model
	// was told is read from the transcript, so nothing is added.
	full, added := 0, 0
	for _, r := range td.sim.Received()[n0:] {
		if r.PreviousResponseID == "" {
			full++
			if e, p := len(framed(r, environmentOpen)), len(framed(r, policyOpen)); e != 2 || p != 2 {
				t.Errorf("the full request after the restart holds %d environments and %d permissions, want the 2 and 2 told", e, p)
			}
		} else {
			added += len(contextTexts(r.Input))
		}
	}
	if full == 0 || added != 0 {
		t.Errorf("after a restart: %d full requests, %d new context messages", full, added)
	}
	checkSchema(t, td.sim.Received())

	other := td.connect()
	other.initialize()
	other.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	for _, u := range other.updates() {
		if m := u.UserMessageChunk; m != nil && m.Content.Text != nil && hearthContext(m.Content.Text.Text) {
			t.Errorf("session/load shows hearth's context as the user's words: %.60q", m.Content.Text.Text)
		}
	}
}

// The environment of a session whose repository root was passed over, on
// a given day and zone; the permissions of read-only.
func TestEnvironmentText(t *testing.T) {
	t.Setenv("TZ", "Asia/Kolkata")
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.FixedZone("IST", 5*3600+1800))
	text := environment{cwd: "/h/a&b", root: "/h/a&b", now: day,
		passedOver: "the repository at /h is not opened whole: it is your home directory"}.text()
	for _, want := range []string{
		environmentOpen + "\n  <cwd>/h/a&amp;b</cwd>\n  <shell>",
		"  <current_date>2026-03-04</current_date>\n  <timezone>Asia/Kolkata</timezone>\n",
		"  <workspace_root>/h/a&amp;b (the working directory; the repository at /h is not opened whole: it is your home directory)</workspace_root>\n",
		"  <os>" + osDescription() + "</os>\n" + environmentClose,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the environment lacks %q:\n%s", want, text)
		}
	}
	ro := policyOf(Config{}, "/h/proj", ModeReadOnly).text()
	if !strings.Contains(ro, "Approval mode: `read-only`. Reads and searches run; edits, commands and MCP tools that are not read-only are refused") ||
		!strings.Contains(ro, "Validation: you cannot run tests or builds in this mode") {
		t.Errorf("read-only's permissions:\n%s", ro)
	}
	if strings.Contains(ro, "Network") || strings.Contains(ro, "Sandbox") {
		t.Errorf("read-only runs no command, yet its permissions speak of their sandbox:\n%s", ro)
	}
	for _, m := range modes {
		if validationPolicy[string(m.Id)] == "" {
			t.Errorf("mode %s has no validation policy", m.Id)
		}
	}
}

// A session stored before the guidance went in the chain and before these
// framings — a prose environment note among its first items — gets the
// guidance at its next baseline, and its permissions and environment
// with its next prompt, chained on that baseline.
func TestStoredSessionGetsTheFramings(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	ed.newSession(td.root) // the workspace's row
	ctx := context.Background()
	const id = "ses_0123456789abcdef01234567"
	if err := td.d.db.CreateSession(ctx, store.Session{ID: id, Root: td.root, Mode: ModeAsk, Model: "sim-model"}); err != nil {
		t.Fatal(err)
	}
	old := session.DeveloperMessage("Environment of this session (from hearth; the latest note holds):\n- Mode: ask.\n")
	if _, err := td.d.db.Items().Append(ctx, id, 0, []store.NewItem{{Origin: store.OriginInput, Data: old}}); err != nil {
		t.Fatal(err)
	}
	n := len(td.waitRequests(1))
	ed.prompt(acp.SessionId(id), "hello again")
	var own []sim.Received
	for _, r := range td.sim.Received()[n:] {
		if r.PromptCacheKey == id {
			own = append(own, r)
		}
	}
	if len(own) != 2 || guidanceOf(own[0]) == "" || own[1].PreviousResponseID != own[0].ResponseID {
		t.Fatalf("%d requests; want a re-warm that begins with the guidance, then the prompt chained on it", len(own))
	}
	texts := contextTexts(own[1].Input)
	if len(texts) != 2 || !strings.HasPrefix(texts[0], policyOpen) || !strings.HasPrefix(texts[1], environmentOpen) {
		t.Errorf("the prompt's context: %q; want the permissions and the environment", texts)
	}
}

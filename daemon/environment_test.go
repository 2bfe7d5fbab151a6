package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// environmentNotes are the environment notes among a request's input.
func environmentNotes(r sim.Received) []string {
	var out []string
	for _, t := range developerTexts(r.Input) {
		if strings.HasPrefix(t, environmentHeader) {
			out = append(out, t)
		}
	}
	return out
}

// A session opened in a subdirectory of a git repository begins with its
// environment note: where it works, the OS and shell, today's date, its
// mode in plain words with the network — in its warm-up, before the
// AGENTS.md files.
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
	texts := developerTexts(warm.Input)
	if len(texts) != 2 || !strings.HasPrefix(texts[0], environmentHeader) || !strings.Contains(texts[1], "root rules") {
		t.Fatalf("the warm-up's developer messages: %q", texts)
	}
	env := texts[0]
	for _, want := range []string{
		"- Working directory: " + filepath.Join(td.root, "src") + ". Relative paths in tool calls start here; the shell runs here.",
		"- Workspace: " + td.root + ", the root of the git repository.",
		"- Shell: the shell tool runs /bin/sh -c",
		"- Mode: ask. Reads run; edits, commands and MCP tools that are not read-only ask the user first. Commands have the network.",
		"time zone ",
	} {
		if !strings.Contains(env, want) {
			t.Errorf("the note lacks %q:\n%s", want, env)
		}
	}
	if !strings.Contains(env, "- Date: "+before.Format("2006-01-02")) && !strings.Contains(env, "- Date: "+after.Format("2006-01-02")) {
		t.Errorf("the note does not give today's date:\n%s", env)
	}
}

// A mode change reaches the model with the next prompt, in a new note
// before the user's message of a request still chained on the last; a
// prompt with nothing changed carries none; the day turning carries one;
// and a restart keeps track of what the model was told.
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
	notes := environmentNotes(second)
	if second.PreviousResponseID != recs[1].ResponseID || len(notes) != 1 || !strings.Contains(notes[0], "- Mode: full-auto. Reads, edits, commands and MCP tools all run without asking.") {
		t.Fatalf("after set_mode: previous_response_id %q (want %q), notes %q", second.PreviousResponseID, recs[1].ResponseID, notes)
	}
	if last := second.Input[len(second.Input)-1]; !strings.Contains(string(last), `"role":"user"`) {
		t.Errorf("the note does not precede the user's message: last item %s", last)
	}
	if !strings.Contains(notes[0], "Commands should have no network") && !strings.Contains(notes[0], "Commands have no network") {
		t.Errorf("full-auto's commands have the network?\n%s", notes[0])
	}

	ed.prompt(id, "nothing changed")
	recs = td.waitRequests(4)
	if n := environmentNotes(recs[3]); len(n) != 0 || recs[3].PreviousResponseID == "" {
		t.Errorf("a prompt with nothing changed carries %d notes (previous %q)", len(n), recs[3].PreviousResponseID)
	}

	clock.Lock()
	clock.shift = 24 * time.Hour
	clock.Unlock()
	t.Cleanup(func() { clock.Lock(); clock.shift = 0; clock.Unlock() })
	ed.prompt(id, "a day later")
	recs = td.waitRequests(5)
	tomorrow := time.Now().Add(24 * time.Hour).Format("2006-01-02")
	if n := environmentNotes(recs[4]); len(n) != 1 || !strings.Contains(n[0], "- Date: "+tomorrow) || recs[4].PreviousResponseID == "" {
		t.Errorf("the day turned: notes %q (previous %q)", n, recs[4].PreviousResponseID)
	}

	n0 := len(td.sim.Received())
	td.d.Close()
	td.restart()
	ed = td.connect()
	ed.initialize()
	ed.prompt(id, "after a restart")
	// The reopened session re-warms in full, then chains; what the model
	// was told is read from the transcript, so no note is added.
	full, added := 0, 0
	for _, r := range td.sim.Received()[n0:] {
		if r.PreviousResponseID == "" {
			full++
			if n := len(environmentNotes(r)); n != 3 {
				t.Errorf("the full request after the restart holds %d notes, want the 3 told", n)
			}
		} else {
			added += len(environmentNotes(r))
		}
	}
	if full == 0 || added != 0 {
		t.Errorf("after a restart: %d full requests, %d new notes", full, added)
	}

	// Every request — the guidance as instructions, the notes as developer
	// messages — is one the API's own schema accepts.
	rs, err := apischema.Responses("ResponsesClientEventResponseCreate")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range td.sim.Received() {
		if err := apischema.Validate(rs, r.Raw); err != nil {
			t.Errorf("request %d does not validate against the Responses API schema: %v", i, err)
		}
	}
}

// The note's words for a session whose repository root was passed over, in
// read-only, on a given day and zone.
func TestEnvironmentText(t *testing.T) {
	t.Setenv("TZ", "Asia/Kolkata")
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.FixedZone("IST", 5*3600+1800))
	text := environment{cwd: "/h/proj", root: "/h/proj", mode: ModeReadOnly, now: day,
		passedOver: "the repository at /h is not opened whole: it is your home directory"}.text()
	for _, want := range []string{
		environmentHeader + "- Working directory: /h/proj.",
		"- Workspace: the working directory; the repository at /h is not opened whole: it is your home directory. The tools reach nothing outside it.",
		"- Date: 2026-03-04 (Wednesday); time zone Asia/Kolkata (UTC+05:30).",
		"- Mode: read-only. Reads run; edits, commands and MCP tools that are not read-only are refused.\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the note lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "network") {
		t.Errorf("read-only runs no command, yet the note speaks of their network:\n%s", text)
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
)

// guidanceOf is the guidance message at the head of a request's input, or
// "" when it does not begin with one.
func guidanceOf(r sim.Received) string {
	if len(r.Input) == 0 {
		return ""
	}
	if t := developerTexts(r.Input[:1]); len(t) == 1 && strings.HasPrefix(t[0], "You are hearth") {
		return t[0]
	}
	return ""
}

// The guidance travels in the chain: the warm-up's input begins with it,
// as a developer message, for the model's family and the tools offered;
// no request carries instructions (at most 1 KB would do); a chained
// request does not send it again, and it is never stored in the session.
func TestGuidanceIsInTheChain(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	ed.prompt(id, "again")
	recs := td.waitRequests(3)
	want := session.GuidanceFor(session.ProfileOf("sim-model").Prompt, toolNamesOf(recs[0]))
	if g := guidanceOf(recs[0]); g != want {
		t.Fatalf("the warm-up does not begin with the guidance for its tools (%d bytes, want %d)", len(g), len(want))
	}
	for i, r := range recs {
		if len(r.Instructions) > 1<<10 {
			t.Errorf("request %d: %d bytes of instructions", i, len(r.Instructions))
		}
		if i > 0 && (r.PreviousResponseID == "" || guidanceOf(r) != "") {
			t.Errorf("request %d: previous %q, guidance sent again: %v", i, r.PreviousResponseID, guidanceOf(r) != "")
		}
	}
	items, err := td.d.db.Items().List(context.Background(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if strings.Contains(string(it.Data), "You are hearth") {
			t.Errorf("the guidance is stored in the session: %.80s", it.Data)
		}
	}
}

// A compaction's new baseline begins with the guidance again, with the
// API's compaction as with a summary; and a restart's first full request
// too (a session stored before the guidance went in the chain gets it
// there).
func TestGuidanceBeginsEveryBaseline(t *testing.T) {
	for _, mode := range []string{session.CompactLocal, session.CompactServer} {
		t.Run(mode, func(t *testing.T) {
			td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Compaction = mode })
			ed := td.connect()
			ed.initialize()
			id := ed.newSession(td.root)
			ed.prompt(id, "hello")
			n := len(td.waitRequests(2))
			ed.prompt(id, "/compact")
			ed.prompt(id, "after")
			recs := td.sim.Received()
			full := 0
			for _, r := range recs[n:] {
				switch {
				case r.Endpoint == sim.EndpointCompact:
					if guidanceOf(r) == "" {
						t.Errorf("the API's compaction was sent the view without the guidance first")
					}
				case r.PreviousResponseID == "":
					full++
					if guidanceOf(r) == "" {
						t.Errorf("a full request after the compaction does not begin with the guidance: %.200s", r.Input[0])
					}
				}
			}
			if full == 0 {
				t.Errorf("no new baseline after the compaction")
			}
			checkSchema(t, recs)

			td.d.Close()
			td.restart()
			ed = td.connect()
			ed.initialize()
			m := len(td.sim.Received())
			ed.prompt(id, "after a restart")
			for _, r := range td.sim.Received()[m:] {
				if r.PreviousResponseID == "" && r.Endpoint == "" && guidanceOf(r) == "" {
					t.Errorf("the first baseline after a restart lacks the guidance")
				}
			}
		})
	}
}

// The guidance a session gets names every tool the workspace offers it
// (MCP tools by their prefix).
func TestGuidanceNamesEveryTool(t *testing.T) {
	for style, specs := range workspaceSpecs(workspace.NewToolset(nil)) {
		var names []string
		for _, s := range specs {
			var v struct{ Name string }
			json.Unmarshal(s, &v)
			names = append(names, v.Name)
		}
		for _, family := range []string{session.PromptCodex, session.PromptGPT5, session.PromptGeneral} {
			g := session.GuidanceFor(family, names)
			for _, name := range names {
				if !strings.Contains(g, "`"+name+"`") {
					t.Errorf("%s, %+v: the guidance does not name the tool %s", family, style, name)
				}
			}
		}
	}
}

// Each family gets its own guidance and the verbosity and effort of its
// profile, in requests the API's schema accepts: a codex model the codex
// text at medium verbosity, a gpt-5.x model the gpt-5 text at low, a
// model outside the gpt-5 families the general text and no text object.
func TestGuidancePerFamily(t *testing.T) {
	for _, tc := range []struct {
		model, prompt, text string
	}{
		{"gpt-5.3-codex", session.PromptCodex, `"text":{"verbosity":"medium"}`},
		{"gpt-5.2", session.PromptGPT5, `"text":{"verbosity":"low"}`},
		{"o3", session.PromptGeneral, ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = tc.model })
			ed := td.connect()
			ed.initialize()
			id := ed.newSession(td.root)
			ed.prompt(id, "hello")
			recs := td.waitRequests(2)
			g := guidanceOf(recs[0])
			if g == "" || g != session.GuidanceFor(tc.prompt, toolNamesOf(recs[0])) {
				t.Errorf("the warm-up does not begin with the %s guidance", tc.prompt)
			}
			for i, r := range recs {
				hasText := strings.Contains(string(r.Raw), `"text":{`)
				if (tc.text == "") == hasText || tc.text != "" && !strings.Contains(string(r.Raw), tc.text) {
					t.Errorf("request %d: want %q: %.300s", i, tc.text, r.Raw)
				}
				if !strings.Contains(string(r.Raw), `"reasoning":{"effort":"medium"`) {
					t.Errorf("request %d: not the profile's effort: %.300s", i, r.Raw)
				}
			}
			checkSchema(t, recs)
		})
	}
}

// toolNamesOf are the names of the tools a request offers: a hosted
// tool's (web_search) is its type.
func toolNamesOf(r sim.Received) []string {
	var tools []struct{ Type, Name string }
	json.Unmarshal(r.Tools, &tools)
	var names []string
	for _, tl := range tools {
		if tl.Name == "" {
			tl.Name = tl.Type
		}
		names = append(names, tl.Name)
	}
	return names
}

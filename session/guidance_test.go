package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// guidanceSHA256 records the sha256 of each released guidance text, by
// file. Editing a text without a new version (new guidance/<family>-vN.md
// files and GuidanceVersion) fails TestGuidanceIsVersioned: a version
// names one text, for the record of what a session's model was told.
// Version 1 was one text for every family, sent as the instructions.
var guidanceSHA256 = map[string]string{
	"v1.md":         "d3823ed75a9d4775fdba09dfe699069d70b256d6c901b41fdb06671ca70c14d9",
	"codex-v2.md":   "3604ac8c1040e976297b28a6b3bb0ad13953bb22f8916c4025820f6de6be1174",
	"gpt5-v2.md":    "d1d2f6f20b92ada11b5d2167bd438d898496359e73c9d435ed423a5561808ef4",
	"general-v2.md": "baf72375a448809cdc92ccf604cc2d832c4f3dd645c8bc502eadb344b46220cb",
}

func TestGuidanceIsVersioned(t *testing.T) {
	for family, text := range session.GuidanceFiles() {
		sum := sha256.Sum256([]byte(text))
		got := hex.EncodeToString(sum[:])
		file := family + "-v" + itoa(session.GuidanceVersion) + ".md"
		want, ok := guidanceSHA256[file]
		switch {
		case !ok || want == "":
			t.Errorf("guidance %s has no recorded sha256: record %q", file, got)
		case got != want:
			t.Errorf("the guidance text %s changed (sha256 %s, recorded %s): make new files of version %d, bump GuidanceVersion and record their sums",
				file, got, want, session.GuidanceVersion+1)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// allTools are the tools a codex-family session may be offered.
var allTools = []string{"read_file", "list_dir", "grep", "apply_patch", "edit_file", "write_file", "exec_command", "write_stdin",
	"update_plan", "view_image", "web_search", "mcp__gh__issues"}

// Every family's guidance covers what the issue asks of it, names the
// framings hearth sends, and stays under the ~17 KB other agents send.
func TestGuidanceCovers(t *testing.T) {
	for _, family := range []string{session.PromptCodex, session.PromptGPT5, session.PromptGeneral} {
		g := session.GuidanceFor(family, allTools)
		if n := len(g); n > 14<<10 {
			t.Errorf("%s: guidance is %d bytes; keep it under 14 KiB", family, n)
		}
		for _, want := range []string{
			"AGENTS.md", "deeper file wins", "the user's requests in this conversation win",
			"Before", "update_plan", "end to end", "Fix causes", "tests", "Ambition",
			"Never revert", "Do not commit", "`path:line`", "Markdown", "apply_patch", "`rg`",
			"<environment_context>", "<permissions instructions>", "# AGENTS.md instructions for", "<INSTRUCTIONS>",
			"exec_command", "write_stdin", "view_image", "web_search", "mcp__", "validation policy",
			"not saved", "working directory",
		} {
			if !strings.Contains(g, want) {
				t.Errorf("%s: guidance does not say %q", family, want)
			}
		}
		if strings.Contains(g, "\r") || !strings.HasSuffix(g, "\n") || strings.HasSuffix(g, "\n\n") || strings.Contains(g, "\n\n\n") ||
			strings.Contains(g, "{{") {
			t.Errorf("%s: guidance: LF line ends, no run of blank lines, one final newline, no template left", family)
		}
	}
}

// The guidance names only the tools offered: a family with the shell tool
// hears of shell, not exec_command; without apply_patch, no patch
// habits; without update_plan, no plans.
func TestGuidanceNamesOnlyToolsOffered(t *testing.T) {
	g := session.GuidanceFor(session.PromptGeneral, []string{"read_file", "list_dir", "grep", "edit_file", "write_file", "shell"})
	for _, absent := range []string{"exec_command", "write_stdin", "apply_patch", "update_plan", "view_image", "web_search", "mcp__"} {
		if strings.Contains(g, absent) {
			t.Errorf("the guidance names %s, which is not offered", absent)
		}
	}
	for _, present := range []string{"`shell` runs one command line", "`edit_file`", "`write_file`", "`read_file`", "`list_dir` and `grep`"} {
		if !strings.Contains(g, present) {
			t.Errorf("the guidance does not say %q", present)
		}
	}
	if g := session.GuidanceFor("no such family", nil); g != session.GuidanceFor(session.PromptGeneral, nil) {
		t.Error("an unknown family does not get the general guidance")
	}
}

// With Config.Guidance every baseline begins with the guidance for the
// model's family and the tools offered — the warm-up, the compacted view's
// warm-up, the API's compaction — and no chained request sends it again;
// the transcript never holds it.
func TestGuidanceBeginsEveryBaseline(t *testing.T) {
	for _, how := range []string{session.CompactLocal, session.CompactServer} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, Guidance: true, Compaction: how})
			c := e.open("guided")
			warm(t, c)
			prompt(t, c, "remember the word walrus", nil)
			if _, err := c.Compact(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			prompt(t, c, "still there?", nil)
			recs := e.sim.Received()
			var names []string
			var tools []struct{ Name string }
			json.Unmarshal(recs[0].Tools, &tools)
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			guide := session.DeveloperMessage(session.GuidanceFor(session.PromptGeneral, names))
			baselines := 0
			for i, r := range recs {
				begins := len(r.Input) > 0 && string(r.Input[0]) == string(guide)
				if (r.PreviousResponseID == "") != begins {
					t.Errorf("request %d (previous %q, endpoint %q): begins with the guidance: %v", i, r.PreviousResponseID, r.Endpoint, begins)
				}
				if r.Instructions != "test instructions" {
					t.Errorf("request %d: instructions %q", i, r.Instructions)
				}
				if r.PreviousResponseID == "" {
					baselines++
				}
			}
			if baselines < 2 {
				t.Errorf("%d baselines; want the warm-up's and the compacted view's", baselines)
			}
			items, err := e.db.Items().List(context.Background(), "guided")
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if strings.Contains(string(it.Data), "You are hearth") {
					t.Errorf("the transcript holds the guidance: %.80s", it.Data)
				}
			}
		})
	}
}

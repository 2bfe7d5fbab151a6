package session_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
)

// guidanceSHA256 records the sha256 of each released version of the
// guidance. Editing the text without a new version (a new guidance/vN.md
// and GuidanceVersion) fails TestGuidanceIsVersioned: a version names one
// text, for the record of what a session's model was told.
var guidanceSHA256 = map[int]string{
	1: "d3823ed75a9d4775fdba09dfe699069d70b256d6c901b41fdb06671ca70c14d9",
}

func TestGuidanceIsVersioned(t *testing.T) {
	sum := sha256.Sum256([]byte(session.Guidance))
	got := hex.EncodeToString(sum[:])
	want, ok := guidanceSHA256[session.GuidanceVersion]
	switch {
	case !ok:
		t.Fatalf("guidance version %d has no recorded sha256: add %q to guidanceSHA256", session.GuidanceVersion, got)
	case got != want:
		t.Fatalf("the guidance text of version %d changed (sha256 %s, recorded %s): make it guidance/v%d.md, bump GuidanceVersion and record its sum", session.GuidanceVersion, got, want, session.GuidanceVersion+1)
	}
}

// The guidance covers what the issue asks of it, and stays well under the
// ~17 KB other agents send.
func TestGuidanceCovers(t *testing.T) {
	g := session.Guidance
	if n := len(g); n > 12<<10 {
		t.Errorf("guidance is %d bytes; keep it under 12 KiB", n)
	}
	for _, want := range []string{
		"AGENTS.md", "deeper in the tree wins", "the user's own requests in this conversation win",
		"Before a group of tool calls", "update_plan", "end to end", "Fix causes", "tests",
		"Never revert", "Do not commit", "`path:line`", "Markdown", "apply_patch", "shell",
		"environment note", "working directory",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("guidance does not say %q", want)
		}
	}
	if strings.Contains(g, "\r") || !strings.HasSuffix(g, "\n") || strings.HasSuffix(g, "\n\n") {
		t.Error("guidance: LF line ends and one final newline")
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
)

// The diff a question shows names the file as git does: its path from the
// session's directory, and /dev/null as the old side of a new file.
func TestDescribeCallNamesFilesAsGitDoes(t *testing.T) {
	dir := t.TempDir()
	old := "one\n"
	for _, tc := range []struct {
		name     string
		path     string
		old      *string
		from, to string
	}{
		{"new file", filepath.Join(dir, "sub", "x.txt"), nil, "--- /dev/null\n", "+++ b/sub/x.txt\n"},
		{"edit", filepath.Join(dir, "sub", "x.txt"), &old, "--- a/sub/x.txt\n", "+++ b/sub/x.txt\n"},
		{"outside", "/etc/x.conf", &old, "--- /etc/x.conf\n", "+++ /etc/x.conf\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := acp.ToolCallUpdate{Content: []acp.ToolCallContent{{
				Diff: &acp.ToolCallContentDiff{Path: tc.path, OldText: tc.old, NewText: "one\ntwo\n", Type: "diff"},
			}}}
			got, _ := describeCall(call, "Edit", dir)
			if !strings.Contains(got, tc.from) || !strings.Contains(got, tc.to) {
				t.Errorf("diff headers: want %q and %q in\n%s", tc.from, tc.to, got)
			}
			if !strings.Contains(got, "+two\n") {
				t.Errorf("the added line missing in\n%s", got)
			}
		})
	}
}

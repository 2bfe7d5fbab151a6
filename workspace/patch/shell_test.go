package patch

import (
	"encoding/json"
	"strings"
	"testing"
)

const shellTestPatch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch\n"

func TestShellPatchForms(t *testing.T) {
	tests := []struct {
		name, command  string
		dir, text, msg string
		isPatch        bool
	}{
		{"quoted heredoc", "apply_patch <<'EOF'\n" + shellTestPatch + "EOF\n", "", shellTestPatch, "", true},
		{"double-quoted heredoc, space", "apply_patch << \"PATCH\"\n" + shellTestPatch + "PATCH", "", shellTestPatch, "", true},
		{"bare heredoc, no terminator", "apply_patch <<EOF\n" + shellTestPatch, "", shellTestPatch, "", true},
		{"heredoc, tabs stripped", "apply_patch <<-EOF\n\t*** Begin Patch\n\t*** End Patch\n\tEOF\n", "", "*** Begin Patch\n*** End Patch\n", "", true},
		{"single-quoted argument", "apply_patch '" + shellTestPatch + "'", "", shellTestPatch, "", true},
		{"single quote inside", `apply_patch '*** it'\''s'`, "", "*** it's", "", true},
		{"double-quoted argument, escapes, no expansion", `apply_patch "+x := \"\$HOME\" $y \\ \a"`, "", `+x := "$HOME" $y \ \a`, "", true},
		{"ANSI-C argument", `apply_patch $'*** Begin Patch\n+it\'s\n'`, "", "*** Begin Patch\n+it's\n", "", true},
		{"cd first", "cd 'sub dir' && apply_patch <<'EOF'\n" + shellTestPatch + "EOF", "sub dir", shellTestPatch, "", true},
		{"leading space", "  \napply_patch '" + shellTestPatch + "'  \n", "", shellTestPatch, "", true},

		{"no patch", "apply_patch", "", "", "needs the patch", true},
		{"no patch, newline", "apply_patch\necho hi", "", "", "needs the patch", true},
		{"more after the patch", "apply_patch '" + shellTestPatch + "' && git diff", "", "", "must be the whole command", true},
		{"more on the heredoc line", "apply_patch <<'EOF' > out\n" + shellTestPatch + "EOF", "", "", "the heredoc's first line must be just apply_patch <<'EOF'", true},
		{"unclosed quote", "apply_patch '" + shellTestPatch, "", "", "a quote is not closed", true},
		{"more after the heredoc", "apply_patch <<'EOF'\n" + shellTestPatch + "EOF\ngo test ./...", "", "", "must be the whole command", true},

		{"another program", "apply_patches x", "", "", "", false},
		{"a word about it", "echo apply_patch", "", "", "", false},
		{"cd to home", "cd ~/x && apply_patch 'p'", "", "", "", false},
		{"cd without &&", "cd x; apply_patch 'p'", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, isPatch, msg := FromShell(tt.command)
			if isPatch != tt.isPatch {
				t.Fatalf("isPatch = %v (msg %q)", isPatch, msg)
			}
			if tt.msg != "" {
				if !strings.Contains(msg, tt.msg) {
					t.Fatalf("msg %q, want it to contain %q", msg, tt.msg)
				}
				return
			}
			if msg != "" || (isPatch && (inv.Dir != tt.dir || inv.Text != tt.text)) {
				t.Fatalf("got %+v, msg %q; want dir %q text %q", inv, msg, tt.dir, tt.text)
			}
		})
	}
}

func TestShellPatchArgs(t *testing.T) {
	heredoc := "apply_patch <<'EOF'\n" + shellTestPatch + "EOF\n"
	tests := []struct {
		args    any
		isPatch bool
	}{
		{map[string]any{"command": heredoc, "timeout_ms": 1000}, true},
		{map[string]any{"command": []string{"apply_patch", shellTestPatch}}, true},
		{map[string]any{"command": []string{"bash", "-lc", heredoc}}, true},
		{map[string]any{"command": []string{"/bin/sh", "-c", heredoc}}, true},
		{map[string]any{"command": []string{"python", "-c", heredoc}}, false},
		{map[string]any{"command": []string{"apply_patch"}}, false},
		{map[string]any{"command": "ls"}, false},
		{map[string]any{"command": 3}, false},
		{"not an object", false},
	}
	for _, tt := range tests {
		raw, _ := json.Marshal(tt.args)
		inv, isPatch, msg := FromShellArgs(raw)
		if isPatch != tt.isPatch || (isPatch && (msg != "" || inv.Text != shellTestPatch)) {
			t.Errorf("%s: %+v, %v, %q", raw, inv, isPatch, msg)
		}
	}
}

// A shell call that is an apply_patch invocation is applied as apply_patch,
// with its preview and kind; nothing runs in the shell (there is no
// apply_patch program here: the shell would fail). A `cd DIR &&` makes
// the patch's paths relative to DIR, still confined.

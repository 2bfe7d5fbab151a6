package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritingToolsBadArguments feeds write_file, edit_file and shell the
// malformed calls a model produces. Each must be an error Result whose
// message says what is wrong, Preview must refuse it with the same message
// (so the daemon never asks the user about a call that cannot run), and
// nothing may be written.
func TestWritingToolsBadArguments(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))
	symlink(t, outside, filepath.Join(root, "outdir"))
	symlink(t, filepath.Join(outside, "gone.txt"), filepath.Join(root, "dangling"))
	ts, w := recordingToolset(r)
	// F stands for the tool's other required arguments, so a call is well
	// formed except for the one fault under test.
	fill := map[string]string{
		"write_file": `"content":"x",`,
		"edit_file":  `"old_string":"a","new_string":"b",`,
		"shell":      ``,
	}
	fileCases := []struct{ name, args, want string }{
		{"not JSON", `{F "path": "a.txt"`, "not valid JSON"},
		{"garbage", `hello`, "must be a JSON object"},
		{"array", `[]`, "must be a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"wrong type", `{F "path":1}`, `"path" of TOOL must be a string, not number`},
		{"unknown field", `{F "path":"a.txt","bogus":true}`, `unknown argument "bogus" for TOOL; allowed arguments: `},
		{"no arguments", ``, `missing required argument "path" for TOOL`},
		{"trailing data", `{F "path":"a.txt"} {}`, "extra data"},
		{"dot-dot", `{F "path":"../outside/secret.txt"}`, "outside the workspace"},
		{"dot-dot new", `{F "path":"../outside/new.txt"}`, "outside the workspace"},
		{"absolute outside", `{F "path":` + mustJSON(t, filepath.Join(outside, "secret.txt")) + `}`, "outside the workspace"},
		{"symlink out", `{F "path":"leak"}`, "leads through a symlink to"},
		{"symlinked dir out", `{F "path":"outdir/new.txt"}`, "outside the workspace"},
		{"dangling symlink out", `{F "path":"dangling"}`, "outside the workspace"},
		{"NUL", `{F "path":"a\u0000b"}`, "contains a NUL byte"},
	}
	type badCall struct{ tool, name, args, want string }
	var calls []badCall
	for _, tool := range []string{"write_file", "edit_file"} {
		for _, c := range fileCases {
			calls = append(calls, badCall{tool, c.name, strings.Replace(c.args, "F", fill[tool], 1), strings.ReplaceAll(c.want, "TOOL", tool)})
		}
	}
	calls = append(calls,
		badCall{"write_file", "missing path", `{"content":"x"}`, `missing required argument "path" for write_file`},
		badCall{"edit_file", "missing path", `{"old_string":"a","new_string":"b"}`, `missing required argument "path" for edit_file`},
		badCall{"write_file", "missing content", `{"path":"a.txt"}`, `missing required argument "content" for write_file; e.g. {`},
		badCall{"write_file", "content not a string", `{"path":"a.txt","content":{"text":"x"}}`, `"content" of write_file must be a string, not object`},
		badCall{"edit_file", "missing old_string", `{"path":"a.txt","new_string":"b"}`, `missing required argument "old_string"`},
		badCall{"edit_file", "old_string not a string", `{"path":"a.txt","old_string":1,"new_string":"b"}`, `"old_string" of edit_file must be a string, not number`},
		badCall{"shell", "not JSON", `{"command": "ls"`, "not valid JSON"},
		badCall{"shell", "garbage", `ls -la`, "must be a JSON object"},
		badCall{"shell", "missing command", `{}`, `missing required argument "command" for shell`},
		badCall{"shell", "no arguments", ``, `missing required argument "command" for shell`},
		badCall{"shell", "wrong type", `{"command":true}`, `"command" of shell must be a string, not bool`},
		badCall{"shell", "unknown field", `{"command":"ls","cwd":"/"}`, `unknown argument "cwd" for shell; allowed arguments: command, timeout_ms`},
		badCall{"shell", "trailing data", `{"command":"ls"}]`, "extra data"},
	)
	for _, c := range calls {
		t.Run(c.tool+"/"+c.name, func(t *testing.T) {
			res := call(t, ts, c.tool, c.args)
			if !res.IsError || !strings.Contains(res.Output, c.want) {
				t.Errorf("Run = %+v, want an error containing %q", res, c.want)
			}
			_, err := ts.Preview(context.Background(), c.tool, json.RawMessage(c.args))
			if err == nil || err.Error() != res.Output {
				t.Errorf("Preview error = %v, want Run's message %q", err, res.Output)
			}
		})
	}
	if got := readString(t, filepath.Join(outside, "secret.txt")); got != "secret needle\n" {
		t.Errorf("secret.txt changed to %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only secret.txt", len(entries))
	}
	if got := readString(t, filepath.Join(root, "a.txt")); got != "a\n" {
		t.Errorf("a.txt changed to %q", got)
	}
	if got := w.list(); len(got) != 0 {
		t.Errorf("OnWrite called: %q", got)
	}
}

// TestPreviewErrorsMatchRun checks, for every tool and a spread of invalid
// calls, that whenever Preview refuses a call, Run fails with the same
// message; and for the tools that need permission, that Preview refuses
// every call Run rejects.
func TestPreviewErrorsMatchRun(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a a\n")
	mkdir(t, filepath.Join(root, "dir"))
	ts := NewToolset(r)
	args := []string{
		``, `{}`, `[]`, `{"path":1}`, `{"path":"../x"}`, `{"path":"dir"}`, `{"path":"."}`,
		`{"path":"a.txt","offset":0}`, `{"pattern":"("}`,
		`{"path":"missing.txt","old_string":"a","new_string":"b"}`,
		`{"path":"a.txt","old_string":"a","new_string":"b"}`,
		`{"path":"a.txt","old_string":"zzz","new_string":"b"}`,
		`{"path":"a.txt","old_string":"a","new_string":"a"}`,
		`{"path":"dir","content":"x"}`,
		`{"command":"   "}`, `{"command":"true","timeout_ms":-1}`,
	}
	for _, tool := range ts.Tools() {
		for _, a := range args {
			_, perr := ts.Preview(context.Background(), tool.Name, json.RawMessage(a))
			res := call(t, ts, tool.Name, a)
			switch {
			case perr != nil && (!res.IsError || res.Output != perr.Error()):
				t.Errorf("%s %s: Preview error %q, Run %+v", tool.Name, a, perr, res)
			case perr == nil && res.IsError && !tool.ReadOnly:
				t.Errorf("%s %s: Preview accepted a call Run rejects: %q", tool.Name, a, res.Output)
			}
		}
	}
	if got := readString(t, filepath.Join(root, "a.txt")); got != "a a\n" {
		t.Errorf("a.txt changed to %q", got)
	}
}

package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const shellTestPatch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch\n"

func TestShellRunsApplyPatch(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	writeFile(t, filepath.Join(root, "sub", "b.txt"), "b\n")
	ts := NewToolset(r)
	command := mustJSON(t, map[string]string{"command": "apply_patch <<'EOF'\n" + shellTestPatch + "EOF"})
	p := preview(t, ts, "shell", command)
	if p.As != "apply_patch" || p.Kind != "edit" || p.Command != "" || len(p.Files) != 1 || p.Files[0].New != "A\n" || p.Title != "Patch a.txt" {
		t.Fatalf("preview %+v", p)
	}
	res := call(t, ts, "shell", command)
	if res.IsError || res.Output != "Success. Updated the following files:\nM a.txt\n" || len(res.Files) != 1 {
		t.Fatalf("result %+v", res)
	}
	if got := readBack(t, filepath.Join(root, "a.txt")); got != "A\n" {
		t.Fatalf("a.txt = %q", got)
	}

	cd := mustJSON(t, map[string]string{"command": "cd sub && apply_patch '*** Begin Patch\n*** Update File: b.txt\n-b\n+B\n*** End Patch'"})
	if res := call(t, ts, "shell", cd); res.IsError || res.Locations[0] != "sub/b.txt" || readBack(t, filepath.Join(root, "sub", "b.txt")) != "B\n" {
		t.Fatalf("cd sub: %+v", res)
	}
	escape := mustJSON(t, map[string]string{"command": "cd .. && apply_patch '*** Begin Patch\n*** Add File: outside/x\n+x\n*** End Patch'"})
	if res := call(t, ts, "shell", escape); !res.IsError || !strings.Contains(res.Output, "outside the workspace") {
		t.Fatalf("cd ..: %+v", res)
	}
	bad := mustJSON(t, map[string]string{"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-zzz\n+y\n*** End Patch\nEOF"})
	_, err := ts.Preview(context.Background(), "shell", json.RawMessage(bad))
	if res := call(t, ts, "shell", bad); !res.IsError || err == nil || err.Error() != res.Output || !strings.Contains(res.Output, "hunk 1 of a.txt") {
		t.Fatalf("failed hunk: %+v, preview error %v", res, err)
	}
	// Not an apply_patch: the shell runs it.
	if res := call(t, ts, "shell", `{"command":"echo apply_patch"}`); res.IsError || !strings.HasPrefix(body(res.Output), "apply_patch\n") {
		t.Fatalf("echo: %+v", res)
	}
}

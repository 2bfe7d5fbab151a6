//go:build !unix

package workspace

import (
	"context"
	"strings"
	"testing"
)

func TestShellUnsupported(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	res := call(t, ts, "shell", `{"command":"dir"}`)
	if !res.IsError || !strings.HasPrefix(res.Output, "shell is not supported on this OS") {
		t.Errorf("shell = %+v", res)
	}
	if _, err := ts.Preview(context.Background(), "shell", []byte(`{"command":"dir"}`)); err == nil || err.Error() != res.Output {
		t.Errorf("Preview(shell) error = %v, want %q", err, res.Output)
	}
}

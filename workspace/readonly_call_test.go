package workspace

import "testing"

// TestReadOnlyCall: which calls the daemon may run as reads.
func TestReadOnlyCall(t *testing.T) {
	for _, c := range []struct {
		name, args string
		want       bool
	}{
		{"read_file", `{"path":"a"}`, true},
		{"shell", `{"command":"cat a.txt"}`, true},
		{"shell", `{"command":"rg -n x | head"}`, true},
		{"shell", `{"command":"cat a.txt > b"}`, false},
		{"shell", `{"command":"touch b"}`, false},
		{"shell", `{"command":"cat a.txt","sandbox_permissions":"require_escalated","justification":"why"}`, false},
		{"shell", `{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF"}`, false},
		{"shell", `{"command":`, false},
		{"write_file", `{"path":"a","content":""}`, false},
		{"exec_command", `{"cmd":"cat a.txt"}`, false},
		{"no_such_tool", `{}`, false},
	} {
		if got := ReadOnlyCall(c.name, []byte(c.args)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.name, c.args, got, c.want)
		}
	}
}

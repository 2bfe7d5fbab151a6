package workspace

import (
	"strings"
	"testing"
)

// A chunk keeps its head and tail within the budget, however its bytes
// came, and says about how many tokens it left out.
func TestChunkText(t *testing.T) {
	write := func(parts ...string) chunk {
		o := newPendingOutput()
		for _, p := range parts {
			o.Write([]byte(p))
		}
		return o.take()
	}
	for _, c := range []struct {
		name   string
		c      chunk
		budget int
		want   string
	}{
		{"within", write("hello\n"), 100, "hello\n"},
		{"no bound", write("hello\n"), 0, "hello\n"},
		{"short text cut", write(strings.Repeat("a", 10) + strings.Repeat("b", 80) + strings.Repeat("c", 10)), 20, strings.Repeat("a", 10) + "…20 tokens truncated…" + strings.Repeat("c", 10)},
		{"cut characters", write("é" + strings.Repeat("x", 40) + "é"), 2, "…11 tokens truncated…"},
		{"whole characters", write("é" + strings.Repeat("x", 40) + "é"), 4, "é…10 tokens truncated…é"},
		{"past the buffer", write(strings.Repeat("h", pendingHead), strings.Repeat("m", 3*pendingTail), "end"), 8, "hhhh…65535 tokens truncated…mend"},
	} {
		if got := c.c.text(c.budget); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

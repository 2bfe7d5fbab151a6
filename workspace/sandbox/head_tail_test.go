package sandbox

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	write := func(h *headTail, chunks ...string) {
		for _, c := range chunks {
			if n, err := h.Write([]byte(c)); n != len(c) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", c, n, err)
			}
		}
	}
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"empty", nil, ""},
		{"fits", []string{"abc", "def"}, "abcdef"},
		{"exactly head+tail", []string{"0123456789"}, "0123456789"},
		{"one over", []string{"0123456789x"}, "01234\n[... 1 bytes omitted ...]\n6789x"},
		{"big write", []string{strings.Repeat("a", 5) + strings.Repeat("b", 100) + "vwxyz"}, "aaaaa\n[... 100 bytes omitted ...]\nvwxyz"},
		{"byte by byte", strings.Split("abcdefghijklmnopqrstuvwxyz", ""), "abcde\n[... 16 bytes omitted ...]\nvwxyz"},
		{"tail across writes", []string{"abcde", "123", "45", "678", "9"}, "abcde\n[... 4 bytes omitted ...]\n56789"},
		// é is two bytes: the cut must not split one; the bytes of cut
		// characters count as omitted.
		{"utf8 cut", []string{"abcdé" + strings.Repeat("-", 20) + "éwxyz"}, "abcd\n[... 24 bytes omitted ...]\nwxyz"},
		{"invalid bytes", []string{"ok\xff\xfe"}, "ok\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeadTail(5, 5)
			write(h, tt.chunks...)
			if got := h.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHeadTailBounded checks memory stays bounded and the count exact over
// many writes.
func TestHeadTailBounded(t *testing.T) {
	h := newHeadTail(16, 16)
	total := 0
	for i := range 10000 {
		line := fmt.Sprintf("line %d\n", i)
		h.Write([]byte(line))
		total += len(line)
		if len(h.tail) > 2*16 {
			t.Fatalf("tail grew to %d bytes", len(h.tail))
		}
	}
	got := h.String()
	want := fmt.Sprintf("line 0\nline 1\nli\n[... %d bytes omitted ...]\n 9998\nline 9999\n", total-32)
	if got != want || !utf8.ValidString(got) {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

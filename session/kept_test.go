package session

import (
	"fmt"
	"strings"
	"testing"
)

// What is kept of an answer cut short is bounded: its first maxKeptShown
// bytes, whole deltas, and how many more bytes the user was shown.
func TestKeptShownIsBounded(t *testing.T) {
	var a attemptSink
	a.Text("short ")
	a.Text("answer")
	if got := a.kept(); got != "short answer" {
		t.Fatalf("kept %q", got)
	}
	delta := strings.Repeat("x", 1000)
	var b attemptSink
	for range 2000 {
		b.Text(delta)
	}
	got := b.kept()
	if !strings.HasPrefix(got, strings.Repeat("x", maxKeptShown/1000*1000)+"\n\n[… ") ||
		!strings.HasSuffix(got, " more bytes were shown, not kept]") || len(got) > maxKeptShown+64 {
		t.Fatalf("kept %d bytes ending %q", len(got), got[len(got)-60:])
	}
	if want := 2000*1000 - maxKeptShown/1000*1000; !strings.Contains(got, fmt.Sprintf("[… %d more bytes", want)) {
		t.Errorf("kept %q, want %d more bytes", got[len(got)-60:], want)
	}
}

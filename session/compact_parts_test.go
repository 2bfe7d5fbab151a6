package session

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// A part of a view too long for one summary request ends where nothing is
// left half — a call with its output, reasoning with what it led to —
// before a user's message when it can; a first unit larger than the room
// is sent with its long texts clipped (its types and pairs kept) and its
// reasoning left out.
func TestNextPart(t *testing.T) {
	user := func(s string) json.RawMessage { return UserMessage(s) }
	call := func(id string) json.RawMessage {
		return json.RawMessage(`{"type":"function_call","call_id":"` + id + `","name":"read_file","arguments":"{}"}`)
	}
	out := func(id, s string) json.RawMessage { return callOutput(ToolCall{CallID: id}, s) }
	reasoning := json.RawMessage(`{"type":"reasoning","summary":[],"encrypted_content":"` + strings.Repeat("e", 400) + `"}`)
	big := strings.Repeat("a line of a long tool output\n", 200) // ~5.8 KB

	body := []json.RawMessage{user("one"), reasoning, call("c1"), out("c1", "short"), user("two"), call("c2"), out("c2", big), user("three")}
	// Room for the first turn and part of the second: the part is the
	// first turn, whole.
	part, next := nextPart(body, 0, tokensOf(body[:6]...))
	if next != 4 || len(part) != 4 {
		t.Fatalf("part of %d items, next %d; want the first turn (4 items)", len(part), next)
	}
	// Room for the user's message but not the call after it with its
	// output: the message alone.
	if part, next = nextPart(body, 4, 300); next != 5 || len(part) != 1 {
		t.Fatalf("part of %d items, next %d; want the user's message alone", len(part), next)
	}
	// Room for less than the call with its output: no cut fits, so the
	// unit goes, its output clipped.
	part, next = nextPart(body, 5, 300)
	if next != 7 || len(part) != 2 {
		t.Fatalf("clipped part of %d items, next %d; want the call and its output", len(part), next)
	}
	if tokensOf(part...) > 300+200 || readItem(part[1]).Type != "function_call_output" || readItem(part[1]).CallID != "c2" {
		t.Fatalf("clipped part: %d tokens, last item %.100s", tokensOf(part...), part[1])
	}
	if !strings.Contains(string(part[1]), "hearth cut about") {
		t.Fatalf("the clipped output does not say it was cut: %.300s", part[1])
	}
	part, _ = nextPart([]json.RawMessage{reasoning, call("c3"), out("c3", big)}, 0, 100)
	if len(part) != 2 || readItem(part[0]).Type != "function_call" {
		t.Fatalf("the reasoning of a clipped unit was kept: %d items", len(part))
	}
	// The rest fits: all of it.
	if part, next := nextPart(body, 7, 1000); next != len(body) || len(part) != 1 {
		t.Fatalf("the rest: %d items, next %d", len(part), next)
	}
}

// ClipOutput keeps the head and the tail at line boundaries, says how much
// it cut, never splits a character, and leaves a short text alone.
func TestClipOutput(t *testing.T) {
	if got := ClipOutput("short\n", 10); got != "short\n" {
		t.Fatalf("a short output changed: %q", got)
	}
	var b strings.Builder
	for i := range 2000 {
		b.WriteString("line é ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString("\n")
	}
	text := b.String()
	got := ClipOutput(text, 1000)
	if len(got) > 4000+200 || len(got) < 3000 {
		t.Fatalf("clipped to %d bytes; want about 4000", len(got))
	}
	head, rest, ok := strings.Cut(got, "[… hearth cut about ")
	if !ok || !strings.HasPrefix(text, head) || !strings.HasSuffix(head, "\n") {
		t.Fatalf("the head is not the output's first lines: %.200q", got)
	}
	_, tail, _ := strings.Cut(rest, "…]\n")
	if !strings.HasSuffix(text, tail) || !strings.HasPrefix(tail, "line é") {
		t.Fatalf("the tail is not the output's last lines: %.200q", tail)
	}
	cut := len(text) - len(head) - len(tail)
	if want := "tokens here (" + itoa(cut) + " bytes, " + itoa(strings.Count(text[len(head):len(text)-len(tail)], "\n")) + " lines)"; !strings.Contains(rest, want) {
		t.Fatalf("the line does not say what was cut (%s): %.200q", want, rest)
	}
	// No line near the cut: it falls between characters.
	long := strings.Repeat("é", 5000)
	got = ClipOutput(long, 100)
	head, rest, _ = strings.Cut(got, "\n[… hearth")
	_, tail, _ = strings.Cut(rest, "…]\n")
	if !utf8.ValidString(got) || strings.Trim(head, "é") != "" || strings.Trim(tail, "é") != "" || len(head) < 150 || len(tail) < 150 {
		t.Fatalf("a character was split, or the head or tail is missing: %q", got)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

package sim

import (
	"strings"
	"testing"
	"time"
)

// A prompt that starts with a plain word calls its tool with the words
// that follow as arguments; a directive, a tool the request does not offer
// or a turn that has a tool output already takes no word.
func TestPlainWords(t *testing.T) {
	hearth := toolsJSON(t, fnTool("read_file"), fnTool("list_dir"), fnTool("grep"), fnTool("write_file"), fnTool("edit_file"), fnTool("shell"))
	cases := []struct {
		text, call, args string
	}{
		{"read README.md", "read_file", `{"path":"README.md"}`},
		{"Read `docs/a.md`.", "read_file", `{"path":"docs/a.md"}`},
		{"list", "list_dir", `{"path":"."}`},
		{"list docs", "list_dir", `{"path":"docs"}`},
		{"list the files here", "list_dir", `{"path":"."}`},
		{"grep TODO", "grep", `{"pattern":"TODO"}`},
		{"grep func\\s+main cmd", "grep", `{"path":"cmd","pattern":"func\\s+main"}`},
		{"write notes/x.txt hi", "write_file", `{"content":"hi\n","path":"notes/x.txt"}`},
		{"write notes/x.txt two  spaces\nand a line", "write_file", `{"content":"two  spaces\nand a line\n","path":"notes/x.txt"}`},
		{"write empty.txt", "write_file", `{"content":"","path":"empty.txt"}`},
		{"edit a.txt alpha beta gamma", "edit_file", `{"new_string":"beta gamma","old_string":"alpha","path":"a.txt"}`},
		{"  run ls -la | wc -l", "shell", `{"command":"ls -la | wc -l"}`},
		{"RUN date", "shell", `{"command":"date"}`},
		// No word: the rest of the script decides.
		{"run", "", ""},
		{"grep", "", ""},
		{"edit a.txt", "", ""},
		{"running late", "", ""},
		{`run sim:calls=1 sim:tool=shell sim:args={"command":"echo"}`, "shell", `{"command":"echo"}`},
		{"write x sim:tokens=2", "", ""},
	}
	for _, c := range cases {
		p := planTurn(raws(t, userMsg(c.text)), hearth, true)
		if p.callName != c.call || p.callArgs != c.args {
			t.Errorf("%q: plan %+v, want call %q %s", c.text, p, c.call, c.args)
		}
	}
	// Only tools the request offers.
	if p := planTurn(raws(t, userMsg("run ls")), toolsJSON(t, fnTool("read_file")), true); p.callName != "" || p.text != "You said: run ls" {
		t.Errorf("run without a shell tool: %+v", p)
	}
	// After the tool's output: the answer quotes it.
	items := raws(t, userMsg("write notes/x.txt hi"),
		map[string]any{"type": "function_call", "call_id": "c1", "name": "write_file", "arguments": "{}"},
		map[string]any{"type": "function_call_output", "call_id": "c1", "output": "wrote notes/x.txt"})
	if p := planTurn(items, hearth, true); p.callName != "" || p.text != "I called write_file 1 time(s). Last result:\nwrote notes/x.txt" {
		t.Errorf("after the output: %+v", p)
	}
	// slow: a long text, its deltas spaced.
	p := planTurn(raws(t, userMsg("slow")), hearth, true)
	if p.callName != "" || p.gap != slowGap || len(splitWords(p.text)) < slowWords {
		t.Errorf("slow: %+v", p)
	}
	if d := time.Duration(len(splitWords(p.text))-1) * p.gap; d < 8*time.Second || d > 12*time.Second {
		t.Errorf("slow streams over %v, want about 10 s", d)
	}
}

// Options.Hint ends an echoed answer, and only an echo: not a tool's
// summary, not sim:tokens.
func TestHintEndsTheEcho(t *testing.T) {
	_, base := newSim(t, Options{Hint: NoKeyHint})
	c := dial(t, base)
	if got := textOf(c.create(map[string]any{"input": []any{userMsg("hello")}})); got != "You said: hello\n\n"+NoKeyHint {
		t.Errorf("echo = %q", got)
	}
	if got := textOf(c.create(map[string]any{"input": []any{userMsg("sim:tokens=2")}})); got != "tok0 tok1" {
		t.Errorf("sim:tokens = %q", got)
	}
	_, plain := newSim(t, Options{})
	if got := textOf(dial(t, plain).create(map[string]any{"input": []any{userMsg("hello")}})); got != "You said: hello" {
		t.Errorf("without a hint: %q", got)
	}
	for _, w := range []string{"read README.md", "write notes/x.txt hi", "run ls", "slow"} {
		if !strings.Contains(NoKeyHint, "`"+w+"`") || !strings.Contains(WordsHelp, strings.Fields(w)[0]+" ") {
			t.Errorf("%q is not in the hint or the help", w)
		}
	}
}

// The slow word's deltas are paced over the wire: six of them span five
// gaps (the rest of the response is left unread; closing the connection
// ends it).
func TestSlowIsPaced(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": []any{userMsg("slow")}})
	var first time.Time
	for deltas := 0; deltas < 6; {
		if ev := c.read(); ev.Type == "response.output_text.delta" {
			if deltas == 0 {
				first = time.Now()
			}
			deltas++
		}
	}
	if d := time.Since(first); d < 5*slowGap-slowGap/2 {
		t.Errorf("6 deltas of the slow answer within %v, want about %v", d, 5*slowGap)
	}
}

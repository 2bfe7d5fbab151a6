package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// disguised is the command of issue 21: on a terminal printed raw, the
// carriage return and the erase-line sequence leave only "$ ls -la" shown.
const (
	disguised = `rm\u0020-rf\u0020important\u0020#\r\u001b[2K\u0020\u0020\u0020\u0020$\u0020ls\u0020-la`
	// disguisedShown is how ask must show it: every control made visible.
	disguisedShown = `rm -rf important #\r\x1b[2K    $ ls -la`
	// disguisedAsk makes the simulator's model ask to run it.
	disguisedAsk = `run sim:calls=1 sim:tool=shell sim:args={"command":"` + disguised + `"}`
)

// rawControls lists what a terminal would act on instead of showing: the
// control bytes in s other than newline and tab (and, on a terminal, the
// CR the tty's output processing puts before each newline), C1 controls
// and bidi overrides and isolates.
func rawControls(s string, tty bool) []string {
	var found []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
		case c == '\r' && tty && i+1 < len(s) && s[i+1] == '\n':
		case c < 0x20 || c == 0x7f:
			found = append(found, strings.ToValidUTF8(s[max(0, i-20):min(len(s), i+20)], "?"))
		}
	}
	for _, r := range s {
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			found = append(found, fmt.Sprintf("U+%04X", r))
		}
	}
	return found
}

// Without a terminal the refusal note shows the disguised command escaped,
// with a warning, and neither stdout nor stderr holds a raw control byte;
// nothing ran.
func TestAskShowsADisguisedCommandEscaped(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	important := filepath.Join(e.root, "important")
	os.MkdirAll(important, 0o755)
	r := e.ask(t, nil, "", disguisedAsk)
	if r.code != exitAskRefused {
		t.Errorf("exit %d, want %d; stderr:\n%q", r.code, exitAskRefused, r.stderr)
	}
	if _, err := os.Stat(important); err != nil {
		t.Fatalf("important/ is gone: %v", err)
	}
	for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if bad := rawControls(out, false); len(bad) > 0 {
			t.Errorf("%s holds raw control characters %q:\n%q", name, bad, out)
		}
	}
	for _, want := range []string{"refused: Run " + disguisedShown, "    $ " + disguisedShown, "warning: the command contains control characters"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// On a terminal the question shows the exact command escaped and warns
// before asking; "n" leaves important/ where it is.
func TestAskAsksWithTheCommandEscaped(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	important := filepath.Join(e.root, "important")
	os.MkdirAll(important, 0o755)
	screen, code := e.askOnTerminal(t, "n", disguisedAsk)
	if code != 0 {
		t.Errorf("exit %d; terminal:\n%q", code, screen)
	}
	if _, err := os.Stat(important); err != nil {
		t.Fatalf("important/ is gone: %v", err)
	}
	if bad := rawControls(screen, true); len(bad) > 0 {
		t.Errorf("the terminal received raw control characters %q:\n%q", bad, screen)
	}
	warn := strings.Index(screen, "warning: the command contains control characters")
	cmdAt := strings.Index(screen, "    $ "+disguisedShown)
	allow := strings.Index(screen, "Allow?")
	if warn < 0 || cmdAt < 0 || !(cmdAt < allow && warn < allow) {
		t.Errorf("want the escaped command and the warning before the question; terminal:\n%s", screen)
	}
}

// Strings from the model, a tool and the file system reach stdout and
// stderr with their controls made visible: the answer keeps its newlines
// and tabs; file names holding a newline, colour, title and clear-screen
// sequences are listed without acting on the terminal; a tool title with
// an OSC sequence, a bidi override in the answer, an error naming a path.
func TestAskPrintsNoRawControls(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	for _, name := range []string{"line\nbreak.txt", "\x1b[31mred.txt", "\x1b]0;pwned\x07title.txt", "\x1b[2Jclear.txt", "\u202etxt.exe"} {
		if err := os.WriteFile(filepath.Join(e.root, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, r askResult) {
		t.Helper()
		for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			if bad := rawControls(out, false); len(bad) > 0 {
				t.Errorf("%s: %s holds raw control characters %q:\n%q", what, name, bad, out)
			}
		}
	}

	r := e.ask(t, nil, "", "list")
	check("list", r)
	for _, want := range []string{`\x1b[31mred.txt`, `\x1b]0;pwned\x07title.txt`, `\x1b[2Jclear.txt`, `\u202etxt.exe`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list: stdout lacks %q:\n%s", want, r.stdout)
		}
	}

	r = e.ask(t, nil, "", "say \x1b[31mred\rover \u202eevil\u009b\nnext\tcolumn")
	check("answer", r)
	if want := `say \x1b[31mred\rover \u202eevil\u009b` + "\nnext\tcolumn"; !strings.Contains(r.stdout, want) {
		t.Errorf("answer: stdout lacks %q:\n%q", want, r.stdout)
	}

	r = e.ask(t, nil, "", `peek sim:calls=1 sim:tool=read_file sim:args={"path":"\u001b]0;pwned\u0007x\ny.txt"}`)
	check("read_file", r)
	if want := `Read \x1b]0;pwned\x07x\ny.txt`; !strings.Contains(r.stderr, want) {
		t.Errorf("read_file: stderr lacks the title %q:\n%s", want, r.stderr)
	}

	r = e.ask(t, nil, "", "--cwd", filepath.Join(e.root, "no\x1b[2Jsuch"), "hi")
	check("--cwd", r)
	if r.code == 0 || !strings.Contains(r.stderr, `no\x1b[2Jsuch`) {
		t.Errorf("--cwd: exit %d; stderr:\n%s", r.code, r.stderr)
	}
}

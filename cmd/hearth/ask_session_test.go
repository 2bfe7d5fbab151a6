package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// sessionOf is the session id `hearth ask` names on stderr.
func sessionOf(t *testing.T, r askResult) string {
	t.Helper()
	for _, l := range strings.Split(r.stderr, "\n") {
		if id, ok := strings.CutPrefix(l, "hearth: session "); ok {
			return id
		}
	}
	t.Fatalf("no session named on stderr:\n%s", r.stderr)
	return ""
}

// Flags may follow the prompt, and are not sent to the model; after --
// everything is the prompt, even words that begin with -; an unknown flag
// among the prompt's words is refused (exit 2) saying to use --.
func TestAskFlagsAfterThePrompt(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	r := e.ask(t, nil, "", editA, "--yes")
	if r.code != 0 || e.readA(t) != "changed\n" {
		t.Fatalf("--yes after the prompt: exit %d, a.txt %q\n%s", r.code, e.readA(t), r.stderr)
	}
	r = e.ask(t, nil, "", "say", "this", "--mode", "read-only")
	if r.code != 0 || !strings.Contains(r.stdout, "You said: say this") || strings.Contains(r.stdout, "--mode") {
		t.Fatalf("--mode after the prompt: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.ask(t, nil, "", "--", "-v", "--yes", "mean")
	if r.code != 0 || !strings.Contains(r.stdout, "You said: -v --yes mean") {
		t.Fatalf("after --: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.ask(t, nil, "", "explain", "-v")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown flag -v") || !strings.Contains(r.stderr, "hearth ask [flags] -- explain") {
		t.Fatalf("an unknown flag among the prompt's words: exit %d\n%s", r.code, r.stderr)
	}
}

// --continue prompts the workspace's most recent session, --session ID (or
// a unique prefix) a given one: the model sees the earlier turns, nothing
// of them is printed again, and no new session is made. Neither with
// nothing to continue, nor with an id that names no session, runs anything.
func TestAskContinueAndSession(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	first := e.ask(t, nil, "", "remember heliotrope")
	if first.code != 0 {
		t.Fatalf("first ask: exit %d\n%s", first.code, first.stderr)
	}
	id := sessionOf(t, first)
	before := len(e.sim.Received())

	r := e.ask(t, nil, "", "--continue", "and now?")
	if r.code != 0 || sessionOf(t, r) != id {
		t.Fatalf("--continue: exit %d, session %q, want %s\n%s", r.code, sessionOf(t, r), id, r.stderr)
	}
	if strings.Contains(r.stdout, "heliotrope") || !strings.Contains(r.stdout, "You said: and now?") {
		t.Errorf("--continue printed %q: the earlier turn again, or not the answer", r.stdout)
	}
	var sent string
	for _, rec := range e.sim.Received()[before:] {
		for _, in := range rec.Input {
			sent += string(in)
		}
		sent += rec.PreviousResponseID
	}
	if !strings.Contains(sent, "and now?") {
		t.Fatalf("the continued prompt did not reach the model")
	}

	r = e.ask(t, nil, "", "again", "--session", id[:len("ses_")+6])
	if r.code != 0 || sessionOf(t, r) != id {
		t.Fatalf("--session PREFIX: exit %d\n%s", r.code, r.stderr)
	}

	other := t.TempDir()
	r = e.ask(t, nil, "", "--cwd", other, "--continue", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "no earlier session in "+other) {
		t.Errorf("--continue with none: exit %d\n%s", r.code, r.stderr)
	}
	r = e.ask(t, nil, "", "--session", "ses_nosuch", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `no session id begins with "ses_nosuch"`) {
		t.Errorf("--session unknown: exit %d\n%s", r.code, r.stderr)
	}
	r = e.ask(t, nil, "", "--session", id, "--continue", "hi")
	if r.code != 2 {
		t.Errorf("--session with --continue: exit %d\n%s", r.code, r.stderr)
	}
}

// Bad usage exits 2 — a --cwd that is not a directory included — and what
// is printed carries no JSON-RPC framing.
func TestAskBadUsageExitsTwo(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, args := range [][]string{{"--cwd", filepath.Join(dir, "nosuch"), "hi"}, {"--cwd", file, "hi"}, {"--cwd", "/", "hi"}} {
		cmd := exec.Command(binary, append([]string{"ask", "--no-daemon"}, args...)...)
		cmd.Env = os.Environ()
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || strings.Contains(string(out), "invalid params") {
			t.Errorf("ask %v: exit %d\n%s", args, code, out)
		}
	}
}

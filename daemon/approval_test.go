package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// shellArgsPrompt is a prompt whose model calls shell once with args.
func shellArgsPrompt(t *testing.T, args map[string]string) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return "run sim:calls=1 sim:tool=shell sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)
}

// In ask mode a command that only reads runs without a permission
// request; one that writes, or that a redirection makes write, asks.
func TestAskModeReadOnlyCommandsDoNotAsk(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"reject_once", "reject_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	for _, c := range []string{"git status", "rg x", "cat a.txt | head -1", "ls -la src && git diff 2>&1"} {
		ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": c}))
		if a.asked() != 0 {
			t.Fatalf("%q asked for permission", c)
		}
		if out := lastToolOutput(t, td); !strings.Contains(out, "Exit code:") {
			t.Errorf("%q did not run: %q", c, out)
		}
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "main.go") {
		t.Errorf("ls src: %q", out)
	}
	ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": "rm a.txt"}))
	if a.asked() != 1 {
		t.Fatalf("rm asked %d times, want 1", a.asked())
	}
	if _, err := os.Stat(filepath.Join(td.root, "a.txt")); err != nil {
		t.Errorf("a rejected rm ran: %v", err)
	}
	ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": "cat a.txt > b.txt"}))
	if a.asked() != 2 {
		t.Fatalf("a redirection to a file asked %d times in all, want 2", a.asked())
	}
}

// A command that asks to escalate always asks, its justification in the
// permission request, and offers no "always"; allowed, it runs. Full-auto
// refuses it without asking.
func TestEscalationShowsJustification(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	const why = "Allow the tests to write their fixtures under /var?"
	ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": "git status", "sandbox_permissions": "require_escalated", "justification": why}))
	if a.asked() != 1 {
		t.Fatalf("an escalation asked %d times, want 1 (even for a read-only command)", a.asked())
	}
	req := a.seen[0]
	var text []string
	for _, c := range req.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text = append(text, c.Content.Content.Text.Text)
		}
	}
	if !strings.Contains(strings.Join(text, "\n"), why) || req.ToolCall.Title == nil || !strings.Contains(*req.ToolCall.Title, "outside the sandbox") {
		t.Errorf("the request shows title %v, content %q", req.ToolCall.Title, text)
	}
	if len(req.Options) != 2 || req.Options[0].OptionId != "allow_once" || req.Options[1].OptionId != "reject_once" {
		t.Errorf("an escalation offers %+v", req.Options)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "Exit code:") {
		t.Errorf("the allowed escalation did not run: %q", out)
	}

	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": "touch escaped", "sandbox_permissions": "require_escalated", "justification": why}))
	if a.asked() != 1 || !strings.Contains(lastToolOutput(t, td), "full-auto") {
		t.Errorf("full-auto escalation: asked %d, told %q", a.asked(), lastToolOutput(t, td))
	}
	if _, err := os.Stat(filepath.Join(td.root, "escaped")); err == nil {
		t.Error("full-auto ran an escalated command")
	}
}

// "Always allow" of `go test` becomes a rule of the workspace: after a
// restart a second session runs `go test` without asking; the rule is
// listed, and once revoked the command asks again.
func TestAlwaysAllowRuleSurvivesRestart(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_always"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, shellArgsPrompt(t, map[string]string{"command": "go test ./..."}))
	if a.asked() != 1 {
		t.Fatalf("go test asked %d times, want 1", a.asked())
	}
	if opts := a.seen[0].Options; len(opts) != 4 || opts[1].OptionId != "allow_always" || !strings.Contains(opts[1].Name, "`go test`") {
		t.Errorf("options %+v", opts)
	}
	ed.c.Close()
	td.d.Close()

	td.restart()
	b := &asker{} // answers nothing: a question is a cancel
	ed2 := td.connectAnswering(b.onCall)
	ed2.initialize()
	id2 := ed2.newSession(td.root)
	ed2.prompt(id2, shellArgsPrompt(t, map[string]string{"command": "go test -run TestX ./pkg 2>&1 | tail -5"}))
	if b.asked() != 0 {
		t.Fatalf("the kept rule did not hold after a restart: asked %d", b.asked())
	}
	ed2.prompt(id2, shellArgsPrompt(t, map[string]string{"command": "go vet ./..."}))
	if b.asked() != 1 {
		t.Fatalf("go vet asked %d times; a rule for go test covers only go test", b.asked())
	}

	var rules rpc.RulesResult
	ed2.must(rpc.MethodHearthRules, nil, &rules)
	if len(rules.Rules) != 1 || rules.Rules[0].Pattern != "go test" || rules.Rules[0].Kind != "command" || rules.Rules[0].Root != td.root {
		t.Fatalf("_hearth/rules = %+v", rules)
	}
	var revoked rpc.RevokeRulesResult
	ed2.must(rpc.MethodHearthRulesRevoke, rpc.RevokeRulesParams{ID: rules.Rules[0].ID}, &revoked)
	if revoked.Revoked != 1 {
		t.Fatalf("revoked %d", revoked.Revoked)
	}
	if err := ed2.call(rpc.MethodHearthRulesRevoke, rpc.RevokeRulesParams{ID: rules.Rules[0].ID}, nil); err == nil || !strings.Contains(err.Error(), "no rule") {
		t.Errorf("revoking it again: %v", err)
	}
	ed2.prompt(id2, shellArgsPrompt(t, map[string]string{"command": "go test ./..."}))
	if b.asked() != 2 {
		t.Errorf("after the revoke go test asked %d times in all, want 2", b.asked())
	}
}

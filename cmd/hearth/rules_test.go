package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// `hearth rules` lists the kept rules (workspace, what each allows, when
// it was made) with or without a daemon; `hearth rules revoke ID` removes
// one, `--all` the rest, and an unknown id is an error.
func TestRulesListAndRevoke(t *testing.T) {
	isolate(t)
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	goTest, err := db.Rules().Keep(ctx, "/src/app", store.RuleCommand, "go test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Rules().Keep(ctx, "/src/app", store.RulePath, "docs/notes.md"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	code, out, errOut := runCLI("rules")
	if code != 0 || !strings.Contains(out, "ID") || !strings.Contains(out, "/src/app") || !strings.Contains(out, "go test") || !strings.Contains(out, "docs/notes.md") {
		t.Fatalf("rules without a daemon: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	serveInProcess(t)
	code, out, errOut = runCLI("rules", "--json")
	var list rpc.RulesResult
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Rules) != 2 || list.Rules[0].Pattern != "go test" || list.Rules[0].Kind != "command" {
		t.Fatalf("rules --json through the daemon: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI("rules", "revoke", "1"+strings.Repeat("0", 6))
	if code != 1 || !strings.Contains(errOut, "no rule") {
		t.Errorf("revoke an unknown id: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI("rules", "revoke", strconv.FormatInt(goTest.ID, 10))
	if code != 0 || out != "revoked 1 rule\n" {
		t.Fatalf("revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ = runCLI("rules"); strings.Contains(out, "go test") {
		t.Errorf("a revoked rule is still listed: %q", out)
	}
	if code, out, errOut = runCLI("rules", "revoke", "--all"); code != 0 || out != "revoked 1 rule\n" {
		t.Errorf("revoke --all: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ = runCLI("rules"); !strings.HasPrefix(out, "no rules") {
		t.Errorf("after revoke --all: %q", out)
	}
	if code, _, errOut = runCLI("rules", "revoke"); code != 2 || !strings.Contains(errOut, "usage: hearth rules") {
		t.Errorf("revoke with nothing named: exit %d, stderr %q", code, errOut)
	}
}
